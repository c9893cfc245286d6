#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
import Testing

struct User: Codable, Sendable, Equatable {
    var id: Int
    var name: String
}

struct UserRequest: ResourceRequest {
    typealias Response = User
    var id: Int
    var preview: User?

    var request: Request { Request(path: "users/\(id)", domain: .api) }
    var previewData: Data? { preview.map { try! JSONEncoder().encode($0) } }
}

/// A request with its own decoder: the body is the user's name.
struct NameRequest: ResourceRequest {
    typealias Response = String
    var request: Request { Request(path: "name", domain: .api) }
    func decode(_ body: Data) throws -> String { String(decoding: body, as: UTF8.self) }
}

@Suite(.timeLimit(.minutes(1))) struct MonarchTests {
    let log = CallLog()

    private func json(_ user: User) -> ProviderOutcome {
        .response(Response(headers: ["Content-Type": "application/json"], body: try! JSONEncoder().encode(user)))
    }

    // MARK: In-process

    @Test("Monarch performs a request down its registered providers")
    func inProcess() async throws {
        var monarch = Monarch()
        monarch.register(StubProvider("cache", .miss(reason: nil), log: log), for: .any)
        monarch.register(StubProvider("fixtures", ok("logo"), log: log), for: .assets)
        monarch.register(StubProvider("api", ok("user"), log: log), for: .api)
        let response = try await monarch.perform(Request(path: "assets/logo.png", domain: .assets))
        #expect(response.body == Data("logo".utf8))
        #expect(response.source == "fixtures")
        #expect(await log.calls == ["cache", "fixtures"])
    }

    @Test("Monarch throws the chain's errors: exhausted and noProviders")
    func inProcessErrors() async {
        var monarch = Monarch()
        monarch.register(StubProvider("cache", .miss(reason: "cold"), log: log), for: .api)
        let exhausted = await chainError { () async throws(ChainError) in try await monarch.perform(Request(path: "a", domain: .api)) }
        #expect(exhausted?.code == .exhausted)
        #expect(exhausted?.attempts == [ProviderAttempt(provider: "cache", outcome: .miss, message: "cold")])
        let none = await chainError { () async throws(ChainError) in try await monarch.perform(Request(path: "a", domain: .assets)) }
        #expect(none?.code == .noProviders)
    }

    @Test("Monarch can start from a chain built elsewhere")
    func fromChain() async throws {
        let monarch = Monarch(chain: chain(StubProvider("network", ok("x"), log: log)))
        #expect(try await monarch.perform(Request(path: "a")).source == "network")
        #expect(Monarch.defaultDeadline == .seconds(30))
    }

    // MARK: Deadlines

    @Test("a provider slower than the deadline gives deadlineExceeded, with the attempts made before it")
    func deadlineExceeded() async throws {
        var monarch = Monarch()
        monarch.register(StubProvider("cache", .miss(reason: "cold"), log: log))
        monarch.register(StubProvider("bundle", .failure(ProviderFailure(code: "io", message: "unreadable")), log: log))
        monarch.register(SleepingProvider("network"))
        monarch.register(StubProvider("mirror", ok("x"), log: log))
        let error = try #require(await chainError { () async throws(ChainError) in
            try await monarch.perform(Request(path: "a", deadline: .milliseconds(100)))
        })
        #expect(error.code == .deadlineExceeded)
        try #require(error.attempts.count >= 2)
        #expect(Array(error.attempts.prefix(2)) == [
            ProviderAttempt(provider: "cache", outcome: .miss, message: "cold"),
            ProviderAttempt(provider: "bundle", outcome: .failure, code: "io", message: "unreadable"),
        ])
        // The provider that was cut off is listed as timed out; the ones after it were never asked.
        #expect(error.attempts.dropFirst(2).map(\.provider) == ["network"])
        #expect(error.attempts.dropFirst(2).allSatisfy { $0.outcome == .timeout })
        #expect(await log.count(of: "mirror") == 0)
    }

    @Test("a response within the deadline is the answer")
    func withinDeadline() async throws {
        var monarch = Monarch()
        monarch.register(StubProvider("network", ok("quick"), log: log))
        let response = try await monarch.perform(Request(path: "a", deadline: .seconds(20)))
        #expect(response.body == Data("quick".utf8))
    }

    @Test("cancelling the caller gives cancelled, not deadlineExceeded")
    func callerCancels() async throws {
        let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
        var monarch = Monarch()
        monarch.register(StubProvider("cache", .miss(reason: nil), log: log))
        monarch.register(SleepingProvider("network", started: startedContinuation))
        let task = Task { [monarch] in
            await chainError { () async throws(ChainError) in try await monarch.perform(Request(path: "a")) }
        }
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()
        task.cancel()
        let error = await task.value
        #expect(error?.code == .cancelled)
        #expect(error?.attempts.first == ProviderAttempt(provider: "cache", outcome: .miss))
    }

    // MARK: Typed requests

    @Test("a typed request decodes the body as JSON")
    func typed() async throws {
        var monarch = Monarch()
        monarch.register(StubProvider("api", json(User(id: 1, name: "Ada")), log: log), for: .api)
        let user = try await monarch.perform(UserRequest(id: 1))
        #expect(user == User(id: 1, name: "Ada"))
    }

    @Test("a typed request may bring its own decoder")
    func customDecoder() async throws {
        var monarch = Monarch()
        monarch.register(StubProvider("api", ok("Grace"), log: log), for: .api)
        #expect(try await monarch.perform(NameRequest()) == "Grace")
    }

    @Test("preview data is used when the chain fails")
    func previewOnFailure() async throws {
        var monarch = Monarch()
        monarch.register(StubProvider("api", .failure(ProviderFailure(code: "unavailable", message: "down")), log: log), for: .api)
        let preview = User(id: 0, name: "Preview")
        #expect(try await monarch.perform(UserRequest(id: 1, preview: preview)) == preview)

        // No provider at all: the preview still answers.
        #expect(try await Monarch().perform(UserRequest(id: 1, preview: preview)) == preview)
    }

    @Test("preview data is not used when the chain answers")
    func previewIgnoredOnSuccess() async throws {
        var monarch = Monarch()
        monarch.register(StubProvider("api", json(User(id: 1, name: "Ada")), log: log), for: .api)
        #expect(try await monarch.perform(UserRequest(id: 1, preview: User(id: 0, name: "Preview"))).name == "Ada")
    }

    @Test("without preview data the chain's error surfaces")
    func noPreview() async throws {
        var monarch = Monarch()
        monarch.register(StubProvider("api", .miss(reason: "no user"), log: log), for: .api)
        do {
            _ = try await monarch.perform(UserRequest(id: 1))
            Issue.record("expected a ChainError")
        } catch let error as ChainError {
            #expect(error.code == .exhausted)
            #expect(error.attempts.map(\.provider) == ["api"])
        }
    }

    @Test("a body that does not decode surfaces the decoding error, even with preview data")
    func decodingError() async throws {
        var monarch = Monarch()
        monarch.register(StubProvider("api", ok("not json"), log: log), for: .api)
        await #expect(throws: DecodingError.self) { try await monarch.perform(UserRequest(id: 1)) }
        await #expect(throws: DecodingError.self) {
            try await monarch.perform(UserRequest(id: 1, preview: User(id: 0, name: "Preview")))
        }
    }

    @Test("preview data that does not decode surfaces the decoding error")
    func badPreview() async throws {
        struct BadPreview: ResourceRequest {
            typealias Response = User
            var request: Request { Request(path: "users/1", domain: .api) }
            var previewData: Data? { Data("{".utf8) }
        }
        await #expect(throws: DecodingError.self) { try await Monarch().perform(BadPreview()) }
    }
}
