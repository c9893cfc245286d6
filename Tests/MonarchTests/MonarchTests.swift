#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
import MonarchWire
import Testing

struct User: Codable, Sendable, Equatable {
    var id: Int
    var name: String
}

struct UserRequest: MonarchRequest {
    typealias Response = User
    var id: Int
    var path: String { "users/\(id)" }
    var domain: RequestDomain { .api }
    var previewData: User { User(id: id, name: "Preview") }
}

/// A request with its own decoder: the body is the user's name.
struct NameRequest: MonarchRequest {
    typealias Response = String
    var path: String { "name" }
    var domain: RequestDomain { .api }
    var previewData: String { "Preview" }
    func decode(_ body: Data) throws -> String { String(decoding: body, as: UTF8.self) }
}

/// A mutation with every optional part set.
struct RenameRequest: MonarchRequest {
    typealias Response = User
    var id: Int
    var name: String
    var path: String { "users/\(id)" }
    var method: String { "patch" }
    var domain: RequestDomain { .api }
    var query: [QueryItem] { [QueryItem("notify", true), QueryItem("retries", 2), QueryItem(flag: "dry")] }
    var headers: [String: String] { ["X-Trace": "t1"] }
    var body: RequestBody? { .json(["name": name]) }
    var policy: CachePolicy? { .noCache }
    var deadline: Duration? { .seconds(3) }
    var previewData: User { User(id: id, name: name) }
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
        let exhausted = await monarchError { () async throws(MonarchError) in try await monarch.perform(Request(path: "a", domain: .api)) }
        #expect(exhausted == .notFound(ChainError.exhausted([ProviderAttempt(provider: "cache", outcome: .miss, message: "cold")])))
        let none = await monarchError { () async throws(MonarchError) in try await monarch.perform(Request(path: "a", domain: .assets)) }
        #expect(none?.chainError?.code == .noProviders)
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
        let thrown = try #require(await monarchError { () async throws(MonarchError) in
            // Long enough for the two quick providers to answer first on a loaded machine.
            try await monarch.perform(Request(path: "a", deadline: .seconds(2)))
        })
        guard case .timeout(let error) = thrown else {
            Issue.record("expected timeout, got \(thrown)")
            return
        }
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
            await monarchError { () async throws(MonarchError) in try await monarch.perform(Request(path: "a")) }
        }
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()
        task.cancel()
        let error = await task.value
        #expect(error == .cancelled)
    }

    // MARK: Typed requests

    @Test("a typed request decodes the body as JSON")
    func typedDecode() async throws {
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

    @Test("a typed request becomes a Request with every part it sets, the body's content type added")
    func typedToRequest() throws {
        let request = try RenameRequest(id: 7, name: "Ada").request()
        #expect(request.path == "users/7")
        #expect(request.method == "PATCH")
        #expect(request.domain == "api")
        #expect(request.query == [
            QueryItem(name: "notify", value: "true"), QueryItem(name: "retries", value: "2"), QueryItem(name: "dry", value: nil),
        ])
        #expect(request.headers == ["X-Trace": "t1", "Content-Type": "application/json"])
        #expect(request.body == Data(#"{"name":"Ada"}"#.utf8))
        #expect(request.policy == .noCache)
        #expect(request.deadline == .seconds(3))
        #expect(!request.isIdempotent)
    }

    @Test("the in-process Monarch never falls back to preview data: the chain's error surfaces, typed")
    func noPreviewInProcess() async {
        var monarch = Monarch()
        monarch.register(StubProvider("api", .miss(reason: "none"), log: log), for: .api)
        let error = await monarchError { () async throws(MonarchError) in try await monarch.perform(UserRequest(id: 1)) }
        guard case .notFound(let chain)? = error else {
            Issue.record("expected notFound, got \(String(describing: error))")
            return
        }
        #expect(chain.attempts == [ProviderAttempt(provider: "api", outcome: .miss, message: "none")])
    }

    @Test("a non-2xx answer is upstreamStatus with its body, never decoded")
    func upstreamStatus() async {
        var monarch = Monarch()
        monarch.register(StubProvider("api", ok("{\"id\": 1, \"name\": \"Ada\"}", status: 404), log: log), for: .api)
        let error = await monarchError { () async throws(MonarchError) in try await monarch.perform(UserRequest(id: 1)) }
        guard case .upstreamStatus(let response)? = error else {
            Issue.record("expected upstreamStatus, got \(String(describing: error))")
            return
        }
        #expect(response.status == 404)
        #expect(response.body == Data("{\"id\": 1, \"name\": \"Ada\"}".utf8))
    }

    @Test("a body that does not decode is a decoding error with the body's first bytes")
    func decodingError() async {
        var monarch = Monarch()
        monarch.register(StubProvider("api", ok("<html>not json</html>"), log: log), for: .api)
        let error = await monarchError { () async throws(MonarchError) in try await monarch.perform(UserRequest(id: 1)) }
        guard case .decoding(let type, _, let prefix)? = error else {
            Issue.record("expected decoding, got \(String(describing: error))")
            return
        }
        #expect(type == "User")
        #expect(prefix == "<html>not json</html>")
    }

    @Test("a provider's failure is a chainFailure listing each attempt; a union of domains cannot go on the wire")
    func chainFailure() async throws {
        var monarch = Monarch()
        monarch.register(StubProvider("cache", .miss(reason: nil), log: log), for: .api)
        monarch.register(StubProvider("network", .failure(ProviderFailure(code: "fetchFailed", message: "broken")), log: log), for: .api)
        let error = await monarchError { () async throws(MonarchError) in try await monarch.perform(UserRequest(id: 1)) }
        guard case .chainFailure(let chain)? = error else {
            Issue.record("expected chainFailure, got \(String(describing: error))")
            return
        }
        #expect(chain.code == .exhausted)
        #expect(chain.attempts.map(\.provider) == ["cache", "network"])
        #expect(throws: MonarchError.self) { try Request(path: "a", domain: [.api, .assets]).message(id: 1) }
    }
}

@Suite struct MonarchErrorTests {
    @Test("chain errors map to the kinds callers switch on")
    func mapping() {
        let miss = ProviderAttempt(provider: "cache", outcome: .miss)
        let failed = ProviderAttempt(provider: "network", outcome: .failure, code: "fetchFailed", message: "x")
        let slow = ProviderAttempt(provider: "network", outcome: .failure, code: "timeout", message: "x")
        #expect(MonarchError(.exhausted([miss])) == .notFound(.exhausted([miss])))
        #expect(MonarchError(.exhausted([miss, failed])) == .chainFailure(.exhausted([miss, failed])))
        #expect(MonarchError(.exhausted([miss, slow])) == .timeout(.exhausted([miss, slow])))
        #expect(MonarchError(ChainError(.deadlineExceeded, "late")) == .timeout(ChainError(.deadlineExceeded, "late")))
        #expect(MonarchError(ChainError(.cancelled, "stop")) == .cancelled)
        #expect(MonarchError(ChainError(.overloaded, "full")) == .transport(.init(.overloaded, "full")))
        #expect(MonarchError(ChainError(.overloaded, "full")).chainError?.code == .overloaded)
        #expect(MonarchError(ChainError(.noRoute, "none")) == .chainFailure(ChainError(.noRoute, "none")))
        #expect("\(MonarchError.transport(.init(.outcomeUnknown, "lost")))".contains("may or may not have happened"))
    }
}
