import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Monarch
import MonarchWire
import Testing

/// A cluster whose `cached` domain needs a cache and a bundle, `api` a network pool that
/// launches no worker; metrics on a free port; the bundle answers after `latency`.
private func adminCluster(token: String? = nil, networkDomain: Bool = false, latency: String = "0ms") -> ClusterOptions {
    var options = ClusterOptions()
    options.token = token
    options.custom = """
        domains:
          cached: [cache, bundle]
        \(networkDomain ? "  api: [network]" : "")
        routes:
          - match: "docs/..."
            domain: cached
        \(networkDomain ? "  - {match: \"api/...\", domain: api, upstream: \"http://127.0.0.1:9/...\"}" : "")
        workers:
          bundle: {count: 1, root: $FOLDER/Bundle, latency: \(latency)}
          cache: {count: 1}
          \(networkDomain ? "network: {count: 0}" : "")
        metrics: tcp:127.0.0.1:0

        """
    return options
}

extension TestCluster {
    /// `GET PATH` (or `method`) on the metrics listener, with `Authorization: Bearer token` when given.
    func admin(_ path: String, method: String = "GET", token: String? = nil) async throws -> HTTPAnswer {
        let port = HTTPProbe.port(of: try await metricsURL())
        let headers = token.map { ["Authorization: Bearer \($0)"] } ?? []
        return try await HTTPProbe.exchange(HTTPProbe.request(method, path, headers: headers), port: port)
    }
}

@Suite("Admin endpoints", .serialized)
struct AdminEndpointTests {
    @Test("/livez, /readyz and /status answer beside /metrics; HEAD has no body; other paths 404, other methods 405 with Allow")
    func pages() async throws {
        try await TestCluster.with(adminCluster()) { cluster in
            let live = try await cluster.admin("/livez")
            #expect(live.status == 200 && live.body == "ok\n", "\(live)")
            let ready = try await cluster.admin("/readyz")
            #expect(ready.status == 200 && ready.body == "ready\n", "\(ready)")

            let status = try await cluster.admin("/status")
            #expect(status.status == 200, "\(status)")
            #expect(status.header("Content-Type") == "application/json")
            let report = try JSONDecoder().decode(StatusReport.self, from: Data(status.body.utf8))
            #expect(report.version == MonarchRelease.version)
            #expect(Set(report.pools.map(\.kind)) == ["bundle", "cache"])
            #expect(report.workers.map(\.id).sorted() == ["bundle-1", "cache-1"])
            // What monarch status --json prints: the same report (its changing figures aside).
            let json = try await Spawned.run(Executables.monarch, ["status", "--json", "--address", "\(cluster.clientAddress)"])
            let printed = try JSONDecoder().decode(StatusReport.self, from: Data(json.stdout))
            #expect(printed.pools == report.pools && printed.workers.map(\.id) == report.workers.map(\.id))
            #expect(Set(try keys(of: json.stdout)) == Set(try keys(of: Array(status.body.utf8))))

            let head = try await cluster.admin("/status", method: "HEAD")
            #expect(head.status == 200 && head.body.isEmpty && Int(head.header("Content-Length") ?? "") ?? 0 > 100, "\(head)")
            let missing = try await cluster.admin("/healthz")
            #expect(missing.status == 404 && missing.body.contains("/livez"), "\(missing)")
            let posted = try await cluster.admin("/readyz", method: "POST")
            #expect(posted.status == 405 && posted.header("Allow") == "GET, HEAD", "\(posted)")
            let withQuery = try await cluster.admin("/livez?verbose")
            #expect(withQuery.status == 200, "\(withQuery)")
            // A head past 8 KiB that has not ended.
            let tooLarge = try await HTTPProbe.exchange(
                "GET /livez HTTP/1.1\r\nX-Filler: " + String(repeating: "a", count: 9000),
                port: HTTPProbe.port(of: try await cluster.metricsURL()))
            #expect(tooLarge.status == 431, "\(tooLarge)")
        }
    }

    @Test("With a token every page needs Authorization: Bearer, /livez included")
    func token() async throws {
        try await TestCluster.with(adminCluster(token: "sesame")) { cluster in
            for path in ["/livez", "/readyz", "/status", "/metrics"] {
                let bare = try await cluster.admin(path)
                #expect(bare.status == 401 && bare.header("WWW-Authenticate") == "Bearer", "\(path): \(bare)")
                let wrong = try await cluster.admin(path, token: "open")
                #expect(wrong.status == 401, "\(path): \(wrong)")
                let right = try await cluster.admin(path, token: "sesame")
                #expect(right.status == 200, "\(path): \(right)")
                #expect(!right.body.isEmpty)
            }
        }
    }

    @Test("/readyz is 503 while a pool some domain needs has no worker, and 200 once one registers")
    func readyNeedsEveryPool() async throws {
        try await TestCluster.with(adminCluster(networkDomain: true)) { cluster in
            let notReady = try await cluster.admin("/readyz")
            #expect(notReady.status == 503 && notReady.body == "not ready: pool network has no worker\n", "\(notReady)")
            #expect(try await cluster.admin("/livez").status == 200, "alive all the same")
            let worker = try await FakeWorker(at: cluster.workerPath, kind: "network", name: "remote-network")
            try await eventually("ready with a network worker") { try await cluster.admin("/readyz").status == 200 }
            _ = worker
        }
    }

    @Test("/readyz is 503 while the coordinator drains; /livez stays 200 until it stops")
    func notReadyWhileDraining() async throws {
        try await TestCluster.with(adminCluster(latency: "5s")) { cluster in
            let port = HTTPProbe.port(of: try await cluster.metricsURL())
            #expect(try await HTTPProbe.exchange(HTTPProbe.request("GET", "/readyz"), port: port).status == 200)
            let client = try await cluster.connect()
            let slow = Task { await outcome(client, Request(path: "docs/hello.txt")) }
            try await eventually("the request in flight") { try await cluster.status().requestsInFlight == 1 }
            cluster.up.signal(SIGTERM)
            try await eventually("not ready while draining") {
                let ready = try await HTTPProbe.exchange(HTTPProbe.request("GET", "/readyz"), port: port)
                return ready.status == 503 && ready.body == "not ready: the coordinator is draining (it is stopping)\n"
            }
            #expect(cluster.up.isRunning, "the drain waits for the slow request")
            #expect(try await HTTPProbe.exchange(HTTPProbe.request("GET", "/livez"), port: port).status == 200)
            #expect(await slow.value.success?.status == 200, "the request in flight is answered")
            await client.close()
        }
    }

    /// The top-level keys of the JSON object `bytes`.
    private func keys(of bytes: [UInt8]) throws -> [String] {
        let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        return object.map { Array($0.keys) } ?? []
    }
}
