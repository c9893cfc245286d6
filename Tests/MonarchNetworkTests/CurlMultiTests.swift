import Foundation
import MonarchLoop
import MonarchNetwork
import Synchronization
import TestOrigins
import Testing

/// The multi on its own: one exchange per fetch, no policy.
@Suite struct CurlMultiTests {
    @Test func aFetchFromOffTheLoopAnswersWithTheStatusAsIs() async throws {
        try await withHarness { harness in
            let result = await harness.multi.fetch(FetchSpec(url: harness.origin.url("/status/503")))
            guard case .answered(let response) = result else {
                Issue.record("expected an answer, got \(result)")
                return
            }
            #expect(response.status == 503)
            #expect(response.body == Data("status 503".utf8))
            try #expect(await harness.stats().hits["/status/503"] == 1, "the multi never retries")
        }
    }

    @Test func redirectsAreReportedNotFollowed() async throws {
        try await withHarness { harness in
            let result = await harness.multi.fetch(FetchSpec(url: harness.origin.url("/redirect?to=/json")))
            guard case .answered(let response) = result else {
                Issue.record("expected an answer, got \(result)")
                return
            }
            #expect(response.status == 302)
            #expect(response.redirectURL == harness.origin.url("/json"))
        }
    }

    @Test func connectionsAreReused() async throws {
        try await withHarness { harness in
            for _ in 0..<5 {
                guard case .answered = await harness.multi.fetch(FetchSpec(url: harness.origin.url("/json"))) else {
                    Issue.record("a fetch failed")
                    return
                }
            }
            let (made, watched, parked) = try await harness.loop.submit {
                (harness.multi.pollsMade, harness.multi.watchedSockets, harness.multi.parkedSockets)
            }
            let stats = try await harness.stats()
            #expect(stats.hits["/json"] == 5)
            #expect(stats.connections == 1, "one keep-alive connection served all six requests")
            #expect(made == 1, "the connection's socket is watched by one poll across its transfers")
            #expect(watched == 0, "and not watched for libcurl between them")
            #expect(parked == 1, "its poll stays registered with the loop between them")
        }
    }

    @Test("A reused handle carries nothing of its last exchange: after a POST with a body and headers, a GET is plain")
    func aReusedHandleCarriesNothingOfItsLastExchange() async throws {
        try await withHarness { harness in
            struct Echo: Decodable {
                let method: String
                let headers: [String: String]
                let body: String
                func header(_ name: String) -> String? { headers.first { $0.key.lowercased() == name.lowercased() }?.value }
            }
            let multi = harness.multi
            let url = harness.origin.url("/echo")
            func echo(_ spec: FetchSpec) async throws -> Echo {
                guard case .answered(let response) = await multi.fetch(spec) else {
                    throw TestServerError(message: "the \(spec.method) to /echo failed")
                }
                return try JSONDecoder().decode(Echo.self, from: response.body)
            }

            let post = try await echo(FetchSpec(
                url: url, method: "POST", headers: [("X-Custom", "1"), ("Content-Type", "text/plain")], body: Data("posted".utf8)))
            #expect(post.method == "POST")
            #expect(post.body == "posted")
            #expect(post.header("X-Custom") == "1")
            #expect(post.header("Expect") == nil)
            let get = try await echo(FetchSpec(url: url))
            #expect(get.method == "GET")
            #expect(get.body == "")
            #expect(get.header("X-Custom") == nil)
            #expect(get.header("Content-Type") == nil)
            #expect(get.header("Content-Length") == nil)

            // A plain GET keeps its options for the next: its header list is kept while the
            // same headers are sent, and dropped when none are.
            #expect(try await echo(FetchSpec(url: url, headers: [("X-Custom", "2")])).header("X-Custom") == "2")
            #expect(try await echo(FetchSpec(url: url, headers: [("X-Custom", "2")])).header("X-Custom") == "2")
            #expect(try await echo(FetchSpec(url: url, headers: [("X-Other", "3")])).header("X-Custom") == nil)
            let bare = try await echo(FetchSpec(url: url))
            #expect(bare.header("X-Custom") == nil)
            #expect(bare.header("X-Other") == nil)

            // A relay's GET asks for no encoding; the next GET asks again.
            #expect(try await echo(FetchSpec(url: url, decodesContent: false)).header("Accept-Encoding") == nil)
            #expect(try await echo(FetchSpec(url: url)).header("Accept-Encoding") != nil)

            // After a HEAD, a PUT and a DELETE, a GET gets a body again and sends none.
            guard case .answered(let head) = await multi.fetch(FetchSpec(url: url, method: "HEAD")) else {
                Issue.record("the HEAD failed")
                return
            }
            #expect(head.body.isEmpty)
            #expect(try await echo(FetchSpec(url: url)).method == "GET")
            #expect(try await echo(FetchSpec(url: url, method: "PUT", body: Data("put".utf8))).body == "put")
            #expect(try await echo(FetchSpec(url: url, method: "DELETE")).method == "DELETE")
            let last = try await echo(FetchSpec(url: url))
            #expect(last.method == "GET")
            #expect(last.body == "")
            #expect(last.header("Content-Length") == nil)

            let made = try await harness.loop.submit { multi.handlesMade }
            #expect(made == 1, "one handle served every exchange, one after another")
        }
    }

    @Test func aKeptAliveConnectionTheServerClosesIsReplaced() async throws {
        try await withHarness { harness in
            let multi = harness.multi
            guard case .answered = await multi.fetch(FetchSpec(url: harness.origin.url("/hangup?ms=30"))) else {
                Issue.record("the first fetch failed")
                return
            }
            // The server's close makes the parked socket readable: its poll stops then. (Whether
            // the test sees it parked first depends on the machine's speed: not checked here.)
            try await eventually("the parked poll to see the server close the connection") {
                try await harness.loop.submit { multi.parkedSockets } == 0
            }
            for _ in 0..<3 {
                guard case .answered(let response) = await multi.fetch(FetchSpec(url: harness.origin.url("/json"))) else {
                    Issue.record("a fetch after the server closed the connection failed")
                    return
                }
                #expect(response.status == 200)
            }
            let stats = try await harness.stats()
            #expect(stats.connections == 2, "a new connection replaced the closed one, and was kept alive")
            #expect(stats.hits["/json"] == 3)
            let (watched, parked) = try await harness.loop.submit { (multi.watchedSockets, multi.parkedSockets) }
            #expect(watched == 0)
            #expect(parked == 1)
        }
    }

    @Test func theResolversSocketIsNeverLeftParked() async throws {
        try await withHarness { harness in
            let multi = harness.multi
            // A name goes to libcurl's resolver thread, whose socket libcurl watches, stops
            // watching and closes itself: its poll must stop before that, not stay parked on a
            // number the next connection may be given. (`.invalid` never resolves.)
            let unresolvable = await multi.fetch(FetchSpec(url: "http://monarch-test.invalid/", connectTimeout: .seconds(2)))
            guard case .failed = unresolvable else {
                Issue.record("a name under .invalid resolved: \(unresolvable)")
                return
            }
            let (watched, parked) = try await harness.loop.submit { (multi.watchedSockets, multi.parkedSockets) }
            #expect(watched == 0)
            #expect(parked == 0, "the resolver's socket was parked, and then closed under its poll")
            // The next connection is watched and answered, whatever number its socket got.
            for _ in 0..<2 {
                let answer = await multi.fetch(FetchSpec(url: harness.origin.url("/json"), timeout: .seconds(5)))
                guard case .answered(let response) = answer else {
                    Issue.record("a fetch after a failed lookup was not answered: \(answer)")
                    return
                }
                #expect(response.status == 200)
            }
            #expect(try await harness.loop.submit { multi.parkedSockets } == 1, "the connection's socket is parked")
        }
    }

    @Test func aFetchByACancelledTaskEndsAtOnceWithNoRequest() async throws {
        try await withHarness { harness in
            let multi = harness.multi
            let url = harness.origin.url("/json")
            let result = await Task(executorPreference: harness.loop) {
                withUnsafeCurrentTask { $0?.cancel() }
                return await multi.fetch(FetchSpec(url: url))
            }.value
            #expect(result == .failed(FetchFailure(kind: .cancelled, message: "the request was cancelled")))
            try #expect(await harness.stats().hits["/json"] == nil)
        }
    }

    @Test func closingEndsTransfersInFlightAndLaterFetches() async throws {
        try await withHarness { harness in
            let multi = harness.multi
            let slow = Task { await multi.fetch(FetchSpec(url: harness.origin.url("/slow?ms=10000&name=closed"))) }
            try await harness.waitForHit("/slow")
            let inFlight = try await harness.loop.submit { multi.activeTransfers }
            #expect(inFlight == 1, "the slow fetch is still in flight when the multi closes")
            await multi.close()
            guard case .failed(let failure) = await slow.value else {
                Issue.record("expected a failure")
                return
            }
            #expect(failure.kind == .cancelled)
            guard case .failed(let later) = await multi.fetch(FetchSpec(url: harness.origin.url("/json"))) else {
                Issue.record("expected a failure")
                return
            }
            #expect(later.kind == .cancelled)
            let sockets = try await harness.loop.submit { multi.watchedSockets }
            #expect(sockets == 0)
        }
    }

    /// The wait of the tests above stops at the first stats showing the hit: asking on and
    /// on (100 round trips) outlasted their 10 s slow exchange on a loaded machine.
    @Test func waitingForAHitStopsOnceTheOriginHasSeenIt() async throws {
        try await withHarness { harness in
            guard case .answered = await harness.multi.fetch(FetchSpec(url: harness.origin.url("/json"))) else {
                Issue.record("the fetch failed")
                return
            }
            try #expect(await harness.waitForHit("/json"))
            try #expect(await harness.stats().hits["/stats"] == 2, "one ask to wait, one to check")
            try #expect(await !harness.waitForHit("/never", attempts: 2))
        }
    }

    @Test func aTotalTimeoutIsATimeoutAndAConnectFailureIsAConnectionFailure() async throws {
        try await withHarness { harness in
            let slow = await harness.multi.fetch(FetchSpec(url: harness.origin.url("/slow?ms=3000"), timeout: .milliseconds(300)))
            #expect({ if case .failed(let failure) = slow { failure.kind == .timeout } else { false } }(), "\(slow)")
            let port = try unusedPort()
            let refused = await harness.multi.fetch(FetchSpec(url: "http://127.0.0.1:\(port)/"))
            #expect({ if case .failed(let failure) = refused { failure.kind == .connectionFailed } else { false } }(), "\(refused)")
        }
    }

    @Test func cancellingAtAnyMomentIsSafe() async throws {
        try await withHarness { harness in
            let multi = harness.multi
            let paths = ["/json", "/slow?ms=150", "/big?bytes=2000000&length=0", "/echo"]
            let results = await withTaskGroup(of: FetchResult.self) { group in
                for index in 0..<60 {
                    let spec = FetchSpec(
                        url: harness.origin.url(paths[index % paths.count]), method: index % 4 == 3 ? "POST" : "GET",
                        body: index % 4 == 3 ? Data(repeating: 65, count: 300_000) : nil)
                    let task = Task(executorPreference: index % 2 == 0 ? harness.loop : nil) { await multi.fetch(spec) }
                    group.addTask {
                        try? await Task.sleep(for: .milliseconds(index % 15 * 4))
                        task.cancel()
                        return await task.value
                    }
                }
                return await group.reduce(into: [FetchResult]()) { $0.append($1) }
            }
            #expect(results.count == 60)
            for result in results {
                switch result {
                case .answered(let response): #expect(response.status == 200)
                case .failed(let failure): #expect(failure.kind == .cancelled, "\(failure)")
                }
            }
            #expect(results.contains { if case .failed = $0 { true } else { false } })
            let active = try await harness.loop.submit { multi.activeTransfers }
            #expect(active == 0)
            guard case .answered(let after) = await multi.fetch(FetchSpec(url: harness.origin.url("/json"))) else {
                Issue.record("the multi no longer works after the cancels")
                return
            }
            #expect(after.body.count == 1024)
        }
    }
    /// A fetch from off the loop once the loop's shutdown began is answered at once,
    /// cancelled, instead of waiting for ever for a start the loop dropped.
    @Test(.timeLimit(.minutes(1)))
    func aFetchFromOffTheLoopAfterItsShutdownEndsCancelled() async throws {
        let loop = try EventLoop(name: "network-test-shutdown")
        let multi = try await loop.submit { try CurlMulti(on: loop) }
        await multi.close()
        let report = loop.shutdown()
        #expect(report.handlesLeftOpen == 0)
        let answer = Mutex<FetchResult?>(nil)
        // Detached: off the loop. Without an answer it would wait for ever, so the test only
        // watches it for a while.
        Task.detached {
            let result = await multi.fetch(FetchSpec(url: "http://127.0.0.1:9/"))
            answer.withLock { $0 = result }
        }
        try await eventually("the fetch to be answered", timeout: 10) { answer.withLock { $0 } != nil }
        let result = try #require(answer.withLock { $0 })
        #expect({ if case .failed(let failure) = result { failure.kind == .cancelled } else { false } }(), "\(result)")
    }
}
