import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Monarch
import MonarchClient
import MonarchWire
import TestOrigins
import Testing

/// A cluster whose `api` domain is [cache, network, bundle] in front of the test origin:
/// `api/...` → the origin, `slowapi/...` the same with a 600 ms deadline, `elsewhere/...` an
/// upstream the allowlist does not name.
private func networkConfig(origin: TestServerProcess, networkCount: Int = 1) -> ClusterOptions {
    ClusterOptions(custom: """
        domains:
          api: [cache, network, bundle]
        routes:
          - match: "api/..."
            domain: api
            upstream: http://127.0.0.1:\(origin.port)/...
          - match: "slowapi/..."
            domain: api
            upstream: http://127.0.0.1:\(origin.port)/...
            timeout: 600ms
          - match: "elsewhere/..."
            domain: api
            upstream: http://127.0.0.1:9/...
        workers:
          cache: { count: 1, memory: 8MB }
          network: { count: \(networkCount), allow: ["\(origin.allowEntry)"] }
          bundle: { count: 1, root: Bundle }

        """)
}

/// Runs `body` with the test origin and a cluster in front of it.
private func withOriginCluster(
    networkCount: Int = 1, _ body: (TestCluster, TestServerProcess, MonarchClient) async throws -> Void
) async throws {
    try await TestServerProcess.withOrigin { origin in
        try await TestCluster.with(networkConfig(origin: origin, networkCount: networkCount)) { cluster in
            try await cluster.withClient { client in try await body(cluster, origin, client) }
        }
    }
}

/// The origin's counters, fetched through the cluster itself (`/stats` is `no-store`).
private func originStats(_ client: MonarchClient) async throws -> [String: Any] {
    let response = try #require(try await perform(client, Request(path: "api/stats", policy: .noCache)).success)
    return try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
}

private func hits(_ stats: [String: Any], _ path: String) -> Int {
    (stats["hits"] as? [String: Any])?[path] as? Int ?? 0
}

@Suite("Network", .serialized)
struct NetworkTests {
    @Test("An upstream answer through the network worker, then the same from the cache")
    func fetchThenCache() async throws {
        try await withOriginCluster { cluster, _, client in
            let fetched = try #require(try await perform(client, Request(path: "api/json")).success)
            #expect(fetched.status == 200)
            #expect(fetched.source == "network")
            // The origin sends Content-Type, X-Repeated, Server, Date: names arrive in lowercase.
            #expect(fetched.headers["content-type"] == "application/json")
            #expect(fetched.headers["x-repeated"] == "one, two")
            #expect(fetched.headers.keys.allSatisfy { $0 == $0.lowercased() }, "\(fetched.headers)")
            try await cluster.waitForWriteBacks(1)

            let cached = try #require(try await perform(client, Request(path: "api/json")).success)
            #expect(cached.source == "cache")
            #expect(cached.body == fetched.body)
            #expect(cached.headers == fetched.headers)
            #expect(hits(try await originStats(client), "/json") == 1)
        }
    }

    @Test("An upstream 404 is a miss: the bundle, later in the chain, answers")
    func notFoundMovesOn() async throws {
        try await withOriginCluster { cluster, _, client in
            try cluster.rewrite("api/status/404", "from the bundle")
            let answer = try #require(try await perform(client, Request(path: "api/status/404")).success)
            #expect(answer.source == "bundle")
            #expect(String(decoding: answer.body, as: UTF8.self) == "from the bundle")
        }
    }

    @Test("A stale entry is revalidated with If-None-Match; the origin's 304 refreshes it without a body")
    func revalidation() async throws {
        try await withOriginCluster { cluster, _, client in
            // max-age=0: kept, but stale at once.
            let first = try #require(try await perform(client, Request(path: "api/etag?max-age=0")).success)
            #expect(first.source == "network")
            try await cluster.waitForWriteBacks(1)

            let second = try #require(try await perform(client, Request(path: "api/etag?max-age=0")).success)
            #expect(second.status == 200)
            #expect(second.source == "network")
            #expect(String(decoding: second.body, as: UTF8.self) == "tagged body")
            #expect(!second.stale)
            let stats = try await originStats(client)
            #expect(stats["notModified"] as? Int == 1)
            #expect(hits(stats, "/etag") == 2)
            // The refreshed entry was written back.
            try await cluster.waitForWriteBacks(2)
        }
    }

    @Test("A slow upstream ends within the route's deadline, as a timeout")
    func slowUpstream() async throws {
        try await withOriginCluster { _, _, client in
            let start = ContinuousClock.now
            let failure = try #require(try await perform(client, Request(path: "slowapi/slow?ms=5000")).failure)
            #expect(ContinuousClock.now - start < .seconds(2))
            #expect([.deadlineExceeded, .exhausted].contains(failure.code))
            let network = failure.attempts.first { $0.provider == "network" }
            #expect(network?.outcome == .timeout || network?.code == "timeout", "\(failure.attempts)")
        }
    }

    @Test("An upstream outside the allowlist is refused with a clear error")
    func disallowedUpstream() async throws {
        try await withOriginCluster { _, _, client in
            let failure = try #require(try await perform(client, Request(path: "elsewhere/json")).failure)
            #expect(failure.code == .exhausted)
            let network = try #require(failure.attempts.first { $0.provider == "network" })
            #expect(network.code == "upstreamNotAllowed")
            #expect(network.message?.contains("127.0.0.1:9") == true, "\(network)")
        }
    }

    @Test("Mutations pass through and are never cached")
    func mutations() async throws {
        try await withOriginCluster { cluster, _, client in
            let request = Request(path: "api/echo", method: "POST", headers: ["Content-Type": "text/plain"], body: Data("hello".utf8))
            let answer = try #require(try await perform(client, request).success)
            #expect(answer.source == "network")
            let echoed = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: Any])
            #expect(echoed["method"] as? String == "POST")
            #expect(echoed["body"] as? String == "hello")
            try await cluster.waitForBackgroundWork()
            #expect(try await cluster.status().writeBacks == 0)
            #expect(try await cluster.status().typed.writeBackFailures == 0)
        }
    }

    @Test("A client's cancel reaches the network worker, which aborts the transfer")
    func cancelAborts() async throws {
        try await withOriginCluster { cluster, _, client in
            let before = hits(try await originStats(client), "/slow")
            let call = Task { await outcome(client, Request(path: "api/slow?ms=10000&name=cancelled")) }
            // Cancelled only once the origin has the request: a transfer cancelled before it
            // connected leaves the origin nothing to see closed.
            try await eventually("the origin to get the request") {
                try await hits(originStats(client), "/slow") == before + 1
            }
            call.cancel()
            let result = try await within(10, "the cancelled answer") { await call.value }
            #expect(result.failure != nil)
            try await eventually("the origin to see the connection closed") {
                (try await originStats(client)["closed"] as? [String])?.contains("cancelled") == true
            }
        }
    }

    @Test("A worker lost mid-request: a GET is retried on another worker, a POST is not sent twice")
    func workerLossAndIdempotency() async throws {
        try await withOriginCluster(networkCount: 2) { cluster, _, client in
            for (method, retried) in [("GET", true), ("POST", false)] {
                let before = hits(try await originStats(client), "/slow")
                let call = Task {
                    await outcome(client, Request(path: "api/slow?ms=4000&name=\(method)", method: method, policy: .noCache))
                }
                var busy: WorkerStatus?
                // Killed only once the upstream has the request: the POST may have taken effect.
                try await eventually("the origin to get the \(method)") {
                    try await hits(originStats(client), "/slow") == before + 1
                }
                try await eventually("a network worker to hold the \(method)") {
                    busy = try await cluster.status().workers("network").first { $0.inFlight == 1 }
                    return busy != nil
                }
                kill(try #require(busy).pid, SIGKILL)
                let result = try await within(20, "the \(method)'s answer") { await call.value }
                if retried {
                    #expect(result.success?.source == "network", "\(result)")
                    #expect(hits(try await originStats(client), "/slow") == before + 2)
                } else {
                    guard let error = result.failure?.chainError else {
                        Issue.record("expected a chain error, got \(result)")
                        continue
                    }
                    let network = try #require(error.attempts.first { $0.provider == "network" })
                    #expect(network.code == "workerLost")
                    #expect(network.message?.contains("not retried") == true)
                    // A fixed wait remains: it proves a second POST does NOT reach the origin,
                    // and no event follows a send that was rightly never made.
                    try await Task.sleep(for: .milliseconds(300))
                    #expect(hits(try await originStats(client), "/slow") == before + 1)
                }
                try await eventually("two network workers again", timeout: 30) {
                    try await cluster.status().workers("network").count == 2
                }
            }
        }
    }
}
