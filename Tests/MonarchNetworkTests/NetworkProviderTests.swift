import Foundation
import Monarch
import MonarchLoop
import MonarchNetwork
import Testing

/// The provider against the test origin on 127.0.0.1.
@Suite struct NetworkProviderTests {
    @Test func aGetReturnsStatusBodyAndHeaders() async throws {
        try await withHarness { harness in
            let outcome = await harness.provider().perform(routed(harness.origin.url("/json")))
            guard let response = outcome.response() else { return }
            #expect(response.status == 200)
            #expect(response.source == "network")
            #expect(response.body.count == 1024)
            #expect(response.text.hasPrefix("{\"items\""))
            #expect(response.header("content-type") == "application/json")
            #expect(response.header("X-Repeated") == "one, two")
            #expect(response.headers["x-repeated"] == "one, two", "names are lowercase, whatever the upstream sent")
            #expect(response.headers.keys.allSatisfy { $0 == $0.lowercased() }, "\(response.headers)")
            #expect(response.ttl == nil)
            #expect(response.cacheable)
        }
    }

    @Test func headHasHeadersButNoBody() async throws {
        try await withHarness { harness in
            let outcome = await harness.provider().perform(routed(harness.origin.url("/json"), method: "HEAD"))
            guard let response = outcome.response() else { return }
            #expect(response.status == 200)
            #expect(response.body.isEmpty)
            #expect(response.header("content-length") == "1024")
            let stats = try await harness.stats()
            #expect(stats.hits["/json"] == 1)
        }
    }

    @Test func aPostPassesMethodHeadersAndBodyAndIsNotCacheable() async throws {
        try await withHarness { harness in
            let outcome = await harness.provider().perform(routed(
                harness.origin.url("/echo"), method: "POST",
                headers: ["Content-Type": "application/json", "X-Trace": "abc", "Connection": "close", "Keep-Alive": "5"],
                body: Data("{\"name\":\"monarch\"}".utf8)))
            guard let response = outcome.response() else { return }
            let echo = try JSONDecoder().decode(Echo.self, from: response.body)
            #expect(echo.method == "POST")
            #expect(echo.body == "{\"name\":\"monarch\"}")
            #expect(echo.header("content-type") == "application/json")
            #expect(echo.header("x-trace") == "abc")
            #expect(echo.header("keep-alive") == nil, "hop-by-hop headers are not forwarded")
            #expect(!response.cacheable, "mutations are never cached")
        }
    }

    @Test func aLargeRequestBodyIsSentWhole() async throws {
        try await withHarness { harness in
            let body = Data(String(repeating: "0123456789abcdef", count: 1 << 16).utf8)
            let outcome = await harness.provider().perform(routed(harness.origin.url("/echo"), method: "PUT", body: body))
            let echo = try JSONDecoder().decode(Echo.self, from: try #require(outcome.response()).body)
            #expect(echo.body.utf8.count == body.count)
            #expect(echo.header("content-length") == String(body.count))
            #expect(echo.header("expect") == nil, "no 100-continue round trip")
        }
    }

    @Test(arguments: ["PUT", "PATCH", "DELETE"])
    func otherMethodsPassThrough(method: String) async throws {
        try await withHarness { harness in
            let body = method == "DELETE" ? nil : Data("payload of \(method)".utf8)
            let outcome = await harness.provider().perform(routed(harness.origin.url("/echo"), method: method, body: body))
            guard let response = outcome.response() else { return }
            let echo = try JSONDecoder().decode(Echo.self, from: response.body)
            #expect(echo.method == method)
            #expect(echo.body == (body.map { String(decoding: $0, as: UTF8.self) } ?? ""))
            #expect(!response.cacheable)
        }
    }

    @Test(arguments: [404, 410])
    func goneAndNotFoundAreMisses(status: Int) async throws {
        try await withHarness { harness in
            let url = harness.origin.url("/status/\(status)")
            let outcome = await harness.provider().perform(routed(url))
            // The miss names the URL asked and the status it answered.
            #expect(outcome == .miss(reason: "\(url) answered \(status)"))
        }
    }

    @Test func otherClientErrorsAreResponses() async throws {
        try await withHarness { harness in
            let outcome = await harness.provider().perform(routed(harness.origin.url("/status/422")))
            #expect(outcome.response()?.status == 422)
        }
    }

    @Test func aRouteWithNoUpstreamIsAMiss() async throws {
        try await withHarness { harness in
            #expect(await harness.provider().perform(routed(nil)) == .miss(reason: "the route names no upstream"))
        }
    }

    // MARK: - Retries

    @Test func twoServiceUnavailablesThenSuccessIsRetried() async throws {
        try await withHarness { harness in
            let outcome = await harness.provider().perform(routed(harness.origin.url("/flaky/a?fail=2")))
            #expect(outcome.response()?.text == "ok after 2")
            try #expect(await harness.stats().flaky["a"] == 3)
        }
    }

    @Test func anUpstreamAlwaysFailingIsAFailureAfterTheRetries() async throws {
        try await withHarness { harness in
            let outcome = await harness.provider().perform(routed(harness.origin.url("/status/503")))
            #expect(outcome.failureCode == "upstreamStatus")
            #expect(outcome.failure?.message.contains("answered 503 after 3 attempts") == true, "\(outcome)")
            try #expect(await harness.stats().hits["/status/503"] == 3)
        }
    }

    @Test func aStatusOutsideHTTPsIsAFailureNotAResponse() async throws {
        // A response message with such a status is a protocol error to the coordinator, which
        // would close the worker's connection with every request on it.
        try await withHarness { harness in
            for status in [600, 999] {
                let outcome = await harness.provider().perform(routed(harness.origin.url("/status/\(status)")))
                #expect(outcome.failureCode == "upstreamStatus", "\(outcome)")
                #expect(outcome.failure?.message.contains("answered \(status), which is not an HTTP status") == true, "\(outcome)")
                try #expect(await harness.stats().hits["/status/\(status)"] == 1, "not retried")
            }
            let fine = await harness.provider().perform(routed(harness.origin.url("/status/599")))
            #expect(fine.failureCode == "upstreamStatus")
            #expect(fine.failure?.message.contains("answered 599 after") == true, "\(fine)")
        }
    }

    @Test func aPostIsNotRetried() async throws {
        try await withHarness { harness in
            let outcome = await harness.provider().perform(routed(harness.origin.url("/flaky/p?fail=1"), method: "POST"))
            #expect(outcome.failureCode == "upstreamStatus")
            #expect(outcome.failure?.message.contains("after 1 attempt") == true)
            try #expect(await harness.stats().flaky["p"] == 1)
        }
    }

    @Test func aRefusedConnectionIsRetriedThenAConnectionFailure() async throws {
        try await withHarness { harness in
            let port = try unusedPort()
            let provider = harness.provider(allow: ["127.0.0.1:\(port)"])
            let outcome = await provider.perform(routed("http://127.0.0.1:\(port)/x"))
            #expect(outcome.failureCode == "connectionFailed")
            #expect(outcome.failure?.message.contains("after 3 attempts") == true, "\(outcome)")
        }
    }

    @Test func aRetryWhoseWaitWouldOverrunTheDeadlineIsSkipped() async throws {
        try await withHarness { harness in
            // Backoff ceilings of 100 ms, 200 ms, 400 ms… against a 60 ms budget: at most one
            // wait of under 54 ms fits, so far fewer than 11 attempts are made.
            let provider = harness.provider(retries: 10)
            // What shows the waits were skipped is the count of attempts, not a time: a loaded
            // run stretches any time.
            let (outcome, _) = await timed(provider, routed(harness.origin.url("/status/503"), deadline: .milliseconds(60)))
            #expect(["upstreamStatus", "timeout"].contains(outcome.failureCode))
            try #expect(await harness.stats().hits["/status/503", default: 0] < 11)
        }
    }

    // MARK: - Deadlines and cancellation

    @Test func aSlowUpstreamTimesOutBeforeTheDeadline() async throws {
        try await withHarness { harness in
            let deadline = Duration.milliseconds(800)
            let (outcome, elapsed) = await timed(harness.provider(), routed(harness.origin.url("/slow?ms=5000"), deadline: deadline))
            #expect(outcome.failureCode == "timeout", "\(outcome)")
            // 10% of the budget (at most 100 ms) is kept back; the margin absorbs a busy machine.
            // By the deadline, not at the origin's 5 s; the bound is loose for a loaded machine.
            #expect(elapsed < deadline + .seconds(1), "the failure comes by the deadline (took \(elapsed))")
            #expect(elapsed > .milliseconds(500), "the budget is used, not cut short (took \(elapsed))")
        }
    }

    @Test func cancellingAbortsTheTransferPromptly() async throws {
        try await withHarness { harness in
            let provider = harness.provider()
            let request = routed(harness.origin.url("/slow?ms=10000&name=cancelled-one"))
            let task = Task { await provider.perform(request) }
            // Wait until the origin has the request, then cancel.
            try await harness.waitForHit("/slow")
            let inFlight = try await harness.loop.submit { harness.multi.activeTransfers }
            #expect(inFlight == 1, "the slow exchange is still in flight when it is cancelled")
            let cancelledAt = ContinuousClock.now
            task.cancel()
            let outcome = await task.value
            #expect(outcome == .failure(.cancelled))
            // Far sooner than the 10 s the origin would take (the bound is loose: a loaded machine is slow).
            #expect(ContinuousClock.now - cancelledAt < .seconds(9))
            try await eventually("the origin to see the connection closed") {
                try await harness.stats().closed.contains("cancelled-one")
            }
            let active = try await harness.loop.submit { harness.multi.activeTransfers }
            #expect(active == 0)
        }
    }

    @Test("Cancelling during the wait before a retry answers cancelled at once, with no further attempt")
    func cancellingDuringARetryWaitEndsIt() async throws {
        try await withHarness { harness in
            // Waits of up to 20 s each: the cancel all but surely lands in one.
            let provider = NetworkProvider(
                multi: harness.multi,
                configuration: NetworkConfiguration(
                    allowlist: try UpstreamAllowlist(parsing: [harness.origin.allowEntry]),
                    retry: RetryPolicy(maxRetries: 10, base: .seconds(20), cap: .seconds(20))))
            let task = Task { await provider.perform(routed(harness.origin.url("/status/503"), deadline: .seconds(120))) }
            try await harness.waitForHit("/status/503")
            // The 503 is answered, and no attempt runs: the provider waits before its retry.
            try await eventually("the first attempt to end") {
                try await harness.loop.submit { harness.multi.activeTransfers } == 0
            }
            let cancelledAt = ContinuousClock.now
            task.cancel()
            #expect(await task.value == .failure(.cancelled))
            // Sooner than most of the waits it cut short (up to 20 s each); the bound is loose, as
            // the whole suite shares two cores. A cancel that let the wait run would also show as
            // an attempt after it, below.
            #expect(ContinuousClock.now - cancelledAt < .seconds(15))
            let hits = try await harness.stats().hits["/status/503"] ?? 0
            try await Task.sleep(for: .milliseconds(200))
            #expect(try await harness.stats().hits["/status/503"] == hits, "no attempt after the cancel")
            #expect(try await harness.loop.submit { harness.multi.activeTransfers } == 0)
        }
    }

    // MARK: - Redirects

    @Test func aRedirectIsFollowed() async throws {
        try await withHarness { harness in
            let outcome = await harness.provider().perform(routed(harness.origin.url("/redirect?to=/json")))
            guard let response = outcome.response() else { return }
            #expect(response.status == 200)
            #expect(response.body.count == 1024)
        }
    }

    @Test func a303TurnsAPostIntoAGetAnd307KeepsIt() async throws {
        try await withHarness { harness in
            let provider = harness.provider()
            let body = Data("form".utf8)
            let seeOther = await provider.perform(routed(
                harness.origin.url("/redirect?status=303&to=/echo"), method: "POST",
                headers: ["Content-Type": "text/plain"], body: body))
            let asGet = try JSONDecoder().decode(Echo.self, from: try #require(seeOther.response()).body)
            #expect(asGet.method == "GET")
            #expect(asGet.body == "")
            #expect(asGet.header("content-type") == nil)
            let temporary = await provider.perform(routed(
                harness.origin.url("/redirect?status=307&to=/echo"), method: "POST", body: body))
            let kept = try JSONDecoder().decode(Echo.self, from: try #require(temporary.response()).body)
            #expect(kept.method == "POST")
            #expect(kept.body == "form")
        }
    }

    @Test func aRedirectLoopIsTooManyRedirects() async throws {
        try await withHarness { harness in
            let outcome = await harness.provider(maxRedirects: 5).perform(routed(harness.origin.url("/redirect-loop")))
            #expect(outcome.failureCode == "tooManyRedirects")
            try #expect(await harness.stats().hits["/redirect-loop"] == 6)
        }
    }

    @Test func aRedirectToAHostNotAllowedIsRefused() async throws {
        try await withHarness { harness in
            let port = try unusedPort()
            let target = "http://127.0.0.1:\(port)/secret"
            let outcome = await harness.provider().perform(routed(harness.origin.url("/redirect?to=\(target)")))
            #expect(outcome.failureCode == "redirectNotAllowed")
            #expect(outcome.failure?.message.contains("127.0.0.1:\(port)") == true, "\(outcome)")
        }
    }

    @Test(arguments: ["file:///etc/passwd", "ftp://127.0.0.1:21/x", "gopher://127.0.0.1:70/"])
    func aRedirectToAnotherSchemeIsRefused(target: String) async throws {
        try await withHarness { harness in
            let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target
            let outcome = await harness.provider().perform(routed(harness.origin.url("/redirect?to=\(encoded)")))
            #expect(outcome.failureCode == "redirectNotAllowed", "\(outcome)")
        }
    }

    // MARK: - The allowlist

    @Test func aHostNotAllowedIsRefusedWithNoConnection() async throws {
        try await withHarness { harness in
            let provider = harness.provider(allow: ["127.0.0.1:1", "api.example.com:443"])
            let outcome = await provider.perform(routed(harness.origin.url("/json")))
            #expect(outcome.failureCode == "upstreamNotAllowed")
            #expect(outcome.failure?.message.contains(harness.origin.allowEntry) == true, "\(outcome)")
            let stats = try await harness.stats()
            #expect(stats.connections == 1, "only the stats request reached the origin")
            #expect(stats.hits["/json"] == nil)
        }
    }

    @Test(arguments: ["file:///etc/passwd", "ftp://127.0.0.1:21/x", "FILE:///etc/hostname", "dict://127.0.0.1:11211/"])
    func otherSchemesAreRefused(upstream: String) async throws {
        try await withHarness { harness in
            let provider = harness.provider(allow: ["127.0.0.1:21", "127.0.0.1:11211", harness.origin.allowEntry])
            let outcome = await provider.perform(routed(upstream))
            #expect(outcome.failureCode == "upstreamNotAllowed", "\(outcome)")
        }
    }

    @Test func userinfoDoesNotFoolTheAllowlist() async throws {
        try await withHarness { harness in
            let port = try unusedPort()
            let provider = harness.provider()
            let outcome = await provider.perform(routed("http://\(harness.origin.allowEntry)@127.0.0.1:\(port)/json"))
            #expect(outcome.failureCode == "upstreamNotAllowed")
        }
    }

    @Test func anEmptyAllowlistAllowsNothing() async throws {
        try await withHarness { harness in
            let outcome = await harness.provider(allow: []).perform(routed(harness.origin.url("/json")))
            #expect(outcome.failureCode == "upstreamNotAllowed")
            #expect(outcome.failure?.message.contains("nothing allowed") == true)
        }
    }

    // MARK: - Bodies

    @Test(arguments: [true, false])
    func anOversizedBodyIsResponseTooLarge(withContentLength: Bool) async throws {
        try await withHarness { harness in
            let provider = harness.provider(maxResponseBytes: 100_000)
            let length = withContentLength ? 1 : 0
            let over = await provider.perform(routed(harness.origin.url("/big?bytes=300000&length=\(length)")))
            #expect(over.failureCode == "responseTooLarge", "\(over)")
            let exact = await provider.perform(routed(harness.origin.url("/big?bytes=100000&length=\(length)")))
            #expect(exact.response()?.body.count == 100_000)
        }
    }

    @Test func aHeadOfABigResourceIsNotTooLarge() async throws {
        try await withHarness { harness in
            let provider = harness.provider(maxResponseBytes: 1000)
            let outcome = await provider.perform(routed(harness.origin.url("/big?bytes=5000000"), method: "HEAD"))
            #expect(outcome.response()?.header("content-length") == "5000000")
        }
    }

    @Test func aGzipBodyIsDecoded() async throws {
        try await withHarness { harness in
            let outcome = await harness.provider().perform(routed(harness.origin.url("/gzip")))
            guard let response = outcome.response() else { return }
            #expect(response.text == String(repeating: "compressible text ", count: 200))
            #expect(response.header("content-encoding") == nil)
            #expect(response.header("content-length") == String(response.body.count))
        }
    }

    // MARK: - Caching hints

    @Test(arguments: [
        ("max-age=30", true, Duration?.some(.seconds(30))),
        ("public, max-age=30, s-maxage=10", true, .seconds(10)),
        ("no-store", false, nil),
        ("private, max-age=60", false, .seconds(60)),
        ("no-cache", true, .zero),
        ("", true, nil),
    ])
    func cacheControlBecomesTtlAndCacheability(value: String, cacheable: Bool, ttl: Duration?) async throws {
        try await withHarness { harness in
            let encoded = value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
            let outcome = await harness.provider().perform(routed(harness.origin.url("/cache-control?value=\(encoded)")))
            guard let response = outcome.response() else { return }
            #expect(response.cacheable == cacheable)
            #expect(response.ttl == ttl)
        }
    }

    @Test func anETagRevalidatesToA304() async throws {
        try await withHarness { harness in
            let provider = harness.provider()
            guard let first = await provider.perform(routed(harness.origin.url("/etag"))).response() else { return }
            #expect(first.status == 200)
            let tag = try #require(first.header("etag"))
            #expect(first.ttl == .seconds(60))
            let outcome = await provider.perform(routed(harness.origin.url("/etag"), headers: ["If-None-Match": tag]))
            guard let revalidated = outcome.response() else { return }
            #expect(revalidated.status == 304)
            #expect(revalidated.body.isEmpty)
            #expect(revalidated.header("etag") == tag)
            #expect(revalidated.ttl == .seconds(60))
        }
    }

    // MARK: - Many at once

    @Test func aHundredConcurrentTransfersOnOneLoopAllSucceed() async throws {
        try await withHarness { harness in
            let provider = harness.provider()
            let url = harness.origin.url("/json")
            let statuses = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<100 {
                    group.addTask(executorPreference: harness.loop) {
                        await provider.perform(routed(url)).response()?.status ?? 0
                    }
                }
                return await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.count == 100)
            #expect(statuses.allSatisfy { $0 == 200 })
            let stats = try await harness.stats()
            #expect(stats.hits["/json"] == 100)
            #expect(stats.connections <= 65, "at most 64 connections to one host, then reused")
            let (active, sockets) = try await harness.loop.submit { (harness.multi.activeTransfers, harness.multi.watchedSockets) }
            #expect(active == 0)
            #expect(sockets <= 64)
        }
    }
}

/// What the origin's `/echo` returns.
struct Echo: Decodable {
    var method: String
    var headers: [String: String]
    var body: String

    func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}
