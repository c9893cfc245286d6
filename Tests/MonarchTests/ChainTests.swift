#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
import MonarchWire
import Testing

@Suite(.timeLimit(.minutes(1))) struct ChainTests {
    let log = CallLog()

    // MARK: Order, the first response, misses and failures

    @Test("providers are asked in registration order; the first response wins and later ones are not asked")
    func firstResponseWins() async throws {
        let chain = chain(
            StubProvider("cache", .miss(reason: "cold"), log: log),
            StubProvider("bundle", .failure(ProviderFailure(code: "io", message: "disk")), log: log),
            StubProvider("network", ok("hello"), log: log),
            StubProvider("mirror", ok("other"), log: log))
        let response = try await chain.perform(Request(path: "a"))
        #expect(response.body == Data("hello".utf8))
        #expect(response.source == "network")
        #expect(await log.calls == ["cache", "bundle", "network"])
        #expect(await log.count(of: "mirror") == 0)
    }

    @Test("a response from the first provider asks no other")
    func firstProviderAnswers() async throws {
        let chain = chain(StubProvider("cache", ok("x"), log: log), StubProvider("network", ok("y"), log: log))
        for _ in 0..<3 { _ = try await chain.perform(Request(path: "a")) }
        #expect(await log.count(of: "cache") == 3)
        #expect(await log.count(of: "network") == 0)
    }

    @Test("when every provider misses or fails, one exhausted error lists each outcome in order")
    func exhausted() async throws {
        let chain = chain(
            StubProvider("cache", .miss(reason: "not cached"), log: log),
            StubProvider("bundle", .miss(reason: nil), log: log),
            StubProvider("network", .failure(ProviderFailure(code: "unavailable", message: "refused")), log: log),
            StubProvider("worker", .failure(.cancelled), log: log))
        let error = try #require(await chainError { () async throws(ChainError) in try await chain.perform(Request(path: "a")) })
        #expect(error.code == .exhausted)
        #expect(error.attempts == [
            ProviderAttempt(provider: "cache", outcome: .miss, message: "not cached"),
            ProviderAttempt(provider: "bundle", outcome: .miss),
            ProviderAttempt(provider: "network", outcome: .failure, code: "unavailable", message: "refused"),
            ProviderAttempt(provider: "worker", outcome: .cancelled, code: "cancelled", message: "the request was cancelled"),
        ])
        #expect(error.message.contains("cache: miss (not cached)"))
        #expect(error.message.contains("network: failure (refused)"))
        #expect(await log.calls == ["cache", "bundle", "network", "worker"])
    }

    @Test("a chain with no provider for the domain throws noProviders")
    func noProviders() async throws {
        let empty = await chainError { () async throws(ChainError) in try await ProviderChain().perform(Request(path: "a")) }
        #expect(empty?.code == .noProviders)
        #expect(empty?.attempts == [])

        var chain = ProviderChain()
        chain.register(StubProvider("api", ok("x"), log: log), for: .api)
        let other = await chainError { () async throws(ChainError) in
            try await chain.perform(Request(path: "a", domain: .assets))
        }
        #expect(other?.code == .noProviders)
        #expect(await log.calls.isEmpty)
    }

    @Test("source defaults to the answering provider's name and a provider's own source is kept")
    func source() async throws {
        let named = try await chain(StubProvider("bundle", ok("x"), log: log)).perform(Request(path: "a"))
        #expect(named.source == "bundle")
        let own = Response(body: Data("x".utf8), source: "upstream-cdn")
        let kept = try await chain(StubProvider("network", .response(own), log: log)).perform(Request(path: "a"))
        #expect(kept.source == "upstream-cdn")
    }

    @Test("a non-2xx response still wins: it is an answer, not a failure")
    func nonSuccessIsAnAnswer() async throws {
        let chain = chain(StubProvider("network", ok("gone", status: 404), log: log), StubProvider("mirror", ok("x"), log: log))
        let response = try await chain.perform(Request(path: "a"))
        #expect(response.status == 404)
        #expect(!response.isSuccess)
        #expect(await log.calls == ["network"])
    }

    // MARK: Write-back

    @Test("Vary on Accept-Encoding alone does not stop write-back (bodies are kept decoded)")
    func varyAcceptEncodingIsStored() async throws {
        let probe = StoreProbe()
        let subject = chain(
            StoringProvider("memory", log: log, probe: probe),
            StubProvider("network", .response(Response(headers: ["Vary": "accept-encoding"], body: Data("x".utf8))), log: log))
        _ = try await subject.perform(Request(path: "v"))
        var stored = probe.stream.makeAsyncIterator()
        #expect(try #require(await stored.next()).provider == "memory")
    }

    @Test("a cacheable 2xx GET is handed to every storing provider before the one that answered", arguments: ["GET", "HEAD"])
    func writeBack(method: String) async throws {
        let probe = StoreProbe()
        let chain = chain(
            StoringProvider("memory", log: log, probe: probe),
            StubProvider("bundle", .miss(reason: nil), log: log),
            StoringProvider("disk", log: log, probe: probe),
            StubProvider("network", ok("fresh"), log: log))
        let response = try await chain.perform(Request(path: "users/1", method: method))
        #expect(response.source == "network")

        var stored = probe.stream.makeAsyncIterator()
        let first = try #require(await stored.next())
        let second = try #require(await stored.next())
        #expect(Set([first.provider, second.provider]) == ["memory", "disk"])
        for entry in [first, second] {
            #expect(entry.path == "users/1")
            #expect(entry.response == response)
        }
    }

    @Test("no write-back for non-2xx, uncacheable, stale or mutating answers, nor to stores after the answer",
          arguments: [
            WriteBackCase(name: "404", outcome: ok("gone", status: 404)),
            WriteBackCase(name: "304", outcome: ok("", status: 304)),
            WriteBackCase(name: "500", outcome: ok("boom", status: 500)),
            WriteBackCase(name: "uncacheable", outcome: ok("secret", cacheable: false)),
            WriteBackCase(name: "stale", outcome: ok("old", stale: true), policy: .cacheThenRefresh),
            WriteBackCase(name: "POST", outcome: ok("created", status: 201), method: "POST"),
            WriteBackCase(name: "DELETE", outcome: ok("deleted"), method: "DELETE"),
            WriteBackCase(name: "Authorization", outcome: ok("mine"), headers: ["Authorization": "Bearer x"]),
            WriteBackCase(name: "Cookie", outcome: ok("mine"), headers: ["cookie": "session=1"]),
            WriteBackCase(name: "Range", outcome: ok("part", status: 206), headers: ["Range": "bytes=0-3"]),
            WriteBackCase(name: "200 to a Range", outcome: ok("whole"), headers: ["range": "bytes=0-3"]),
            WriteBackCase(name: "If-None-Match", outcome: ok("whole"), headers: ["If-None-Match": "\"x\""]),
            WriteBackCase(name: "206", outcome: ok("part", status: 206)),
            WriteBackCase(name: "Set-Cookie", outcome: .response(Response(headers: ["Set-Cookie": "s=1"], body: Data("x".utf8)))),
            WriteBackCase(name: "Vary: *", outcome: .response(Response(headers: ["vary": "*"]))),
            WriteBackCase(name: "an API key in a header of its own", outcome: ok("you are alice"), headers: ["X-Api-Key": "alice"]),
            WriteBackCase(name: "an unknown header", outcome: ok("tailored"), headers: ["X-Tenant": "acme"]),
            WriteBackCase(name: "Cache-Control: private", outcome: .response(Response(headers: ["Cache-Control": "max-age=60, private"]))),
            WriteBackCase(name: "Cache-Control: no-store", outcome: .response(Response(headers: ["cache-control": "No-Store"]))),
            WriteBackCase(name: "a GET with a body", outcome: ok("searched"), body: Data("{}".utf8)),
          ])
    func noWriteBack(_ testCase: WriteBackCase) async throws {
        let probe = StoreProbe()
        let subject = chain(
            StoringProvider("memory", log: log, probe: probe),
            StubProvider("network", testCase.outcome, log: log))
        _ = try await subject.perform(Request(
            path: "subject", method: testCase.method, headers: testCase.headers, body: testCase.body, policy: testCase.policy))
        try await expectOnlySentinelStored(probe)
    }

    @Test("storing providers after the answering one are not handed the response")
    func noWriteBackForward() async throws {
        let probe = StoreProbe()
        let subject = chain(
            StubProvider("network", ok("x"), log: log),
            StoringProvider("memory", log: log, probe: probe))
        _ = try await subject.perform(Request(path: "subject"))
        #expect(await log.calls == ["network"])
        try await expectOnlySentinelStored(probe)
    }

    @Test("a storing provider that answers itself is not handed its own response")
    func noWriteBackToTheAnswerer() async throws {
        let probe = StoreProbe()
        let subject = chain(StoringProvider("memory", ok("cached"), log: log, probe: probe))
        let response = try await subject.perform(Request(path: "subject"))
        #expect(response.source == "memory")
        try await expectOnlySentinelStored(probe)
    }

    /// Sends a request that is written back to `probe`'s "memory" provider and checks that it is
    /// the first thing stored: nothing the test did before was written back.
    private func expectOnlySentinelStored(_ probe: StoreProbe) async throws {
        let sentinel = chain(StoringProvider("memory", log: log, probe: probe), StubProvider("origin", ok("s"), log: log))
        _ = try await sentinel.perform(Request(path: "sentinel"))
        var stored = probe.stream.makeAsyncIterator()
        let first = try #require(await stored.next())
        #expect(first.path == "sentinel")
    }

    @Test("noCache skips storing providers: they are neither asked nor handed the response")
    func noCacheSkipsStores() async throws {
        let probe = StoreProbe()
        let subject = chain(
            StoringProvider("memory", ok("cached"), log: log, probe: probe),
            StubProvider("network", ok("fresh"), log: log))
        let response = try await subject.perform(Request(path: "subject", policy: .noCache))
        #expect(response.source == "network")
        #expect(response.body == Data("fresh".utf8))
        #expect(await log.calls == ["network"])
        try await expectOnlySentinelStored(probe)
    }

    @Test("noCache with only storing providers throws noProviders")
    func noCacheOnlyStores() async throws {
        let probe = StoreProbe()
        let subject = chain(StoringProvider("memory", ok("cached"), log: log, probe: probe))
        let error = await chainError { () async throws(ChainError) in
            try await subject.perform(Request(path: "a", policy: .noCache))
        }
        #expect(error?.code == .noProviders)
        #expect(await log.calls.isEmpty)
    }

    @Test("cacheFirst and cacheThenRefresh ask storing providers first", arguments: [CachePolicy.cacheFirst, .cacheThenRefresh])
    func otherPoliciesAskStores(policy: CachePolicy) async throws {
        let probe = StoreProbe()
        let subject = chain(
            StoringProvider("memory", ok("cached"), log: log, probe: probe),
            StubProvider("network", ok("fresh"), log: log))
        let response = try await subject.perform(Request(path: "a", policy: policy))
        #expect(response.source == "memory")
    }

    // MARK: Cancellation

    @Test("a cancelled request throws cancelled with the attempts made so far")
    func cancellation() async throws {
        let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
        let subject = chain(
            StubProvider("cache", .miss(reason: "cold"), log: log),
            SleepingProvider("network", started: startedContinuation),
            StubProvider("mirror", ok("x"), log: log))
        let task = Task { await chainError { () async throws(ChainError) in try await subject.perform(Request(path: "a")) } }
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()
        task.cancel()
        let error = await task.value
        #expect(error?.code == .cancelled)
        #expect(error?.attempts.map(\.provider) == ["cache", "network"])
        #expect(error?.attempts.first?.outcome == .miss)
        #expect(error?.attempts.last?.outcome == .cancelled)
        #expect(await log.count(of: "mirror") == 0)
    }

    @Test("a request whose task is already cancelled asks no provider")
    func cancelledBeforeStart() async throws {
        let subject = chain(StubProvider("cache", ok("x"), log: log))
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await chainError { () async throws(ChainError) in try await subject.perform(Request(path: "a")) }
        }
        let error = await task.value
        #expect(error?.code == .cancelled)
        #expect(error?.attempts == [])
        #expect(await log.calls.isEmpty)
    }

    // MARK: ChainError

    @Test("ChainError.description lists each attempt on its own line")
    func description() {
        let error = ChainError.exhausted([
            ProviderAttempt(provider: "cache", outcome: .miss, message: "cold"),
            ProviderAttempt(provider: "network", outcome: .failure, code: "timeout", message: "no answer in 5s"),
        ])
        let lines = error.description.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("exhausted: no provider answered"))
        #expect(lines[1] == "  cache: miss cold")
        #expect(lines[2] == "  network: failure [timeout] no answer in 5s")
        #expect(ChainError(.noRoute, "no route for x").description == "noRoute: no route for x")
    }

    @Test("ChainError travels as a failure detail and back; a code it does not name survives as it came")
    func detailRoundTrip() {
        let error = ChainError(.deadlineExceeded, "late", attempts: [ProviderAttempt(provider: "cache", outcome: .miss)])
        #expect(error.detail.code == "deadlineExceeded")
        #expect(ChainError(error.detail) == error)
        #expect(ChainError(.noRoute, "none").detail.attempts == nil)
        for code in ChainError.Code.known {
            #expect(ChainError(ChainError(code, "m").detail).code == code)
        }
        let unknown = ChainError(FailureMessage.Detail(code: "martian", message: "?"))
        #expect(unknown.code.rawValue == "martian")
        #expect(unknown.detail.code == "martian")
        #expect(unknown.message == "?")
        #expect(ChainError(FailureMessage.Detail(code: "responseTooLarge", message: "big")).code == .responseTooLarge)
    }
}

/// One answer that must not be written back, and the method of its request.
struct WriteBackCase: Sendable, CustomTestStringConvertible {
    var name: String
    var outcome: ProviderOutcome
    var method: String = "GET"
    var policy: CachePolicy? = nil
    var headers: [String: String] = [:]
    var body: Data? = nil

    var testDescription: String { name }
}
