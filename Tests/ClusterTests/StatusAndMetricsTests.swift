import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Monarch
import MonarchClient
import MonarchWire
import Testing

/// The repository's Protocols folder.
let protocolsFolder = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Protocols").path

/// A cluster with a cache in front of the bundle for `cached/...`, and metrics on a free port.
func metricsCluster(token: String? = nil) -> ClusterOptions {
    var options = ClusterOptions()
    options.token = token
    options.custom = """
        domains:
          static: [bundle]
          cached: [cache, bundle]
        routes:
          - match: "docs/..."
            domain: static
          - match: "cached/..."
            domain: cached
        workers:
          bundle: {count: 1, root: $FOLDER/Bundle}
          cache: {count: 1}
        metrics: tcp:127.0.0.1:0

        """
    return options
}

/// Runs a Python script with `arguments`; its standard output, or a thrown error with its
/// standard error when it fails.
func python(_ script: String, _ arguments: [String] = []) async throws -> String {
    let result = try await Spawned.run("/usr/bin/env", ["python3", "-c", script] + arguments)
    guard result.status == 0 else { throw SpawnError("python3 failed (\(result.status)): \(result.stderr)") }
    return String(decoding: result.stdout, as: UTF8.self)
}

extension TestCluster {
    /// The metrics URL the coordinator logged.
    func metricsURL() async throws -> String {
        var url: String?
        try await eventually("the metrics address in the log") {
            url = up.stderr.text.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") && $0.contains("/metrics") }
                .map { String($0.prefix { !$0.isWhitespace }) }
            return url != nil
        }
        return url!
    }
}

@Suite("Status and metrics")
struct StatusAndMetricsTests {
    /// Three misses and a hit on `cached/...`, two answers on `docs/...`, one failure.
    func makeTraffic(_ cluster: TestCluster) async throws {
        let client = try await cluster.connect()
        try cluster.folder.write("Bundle/cached/a.txt", "a")
        for path in ["cached/a.txt", "docs/hello.txt", "docs/other.txt"] { _ = try await perform(client, Request(path: path)) }
        try await eventually("the write-back") { try await cluster.status(via: client).writeBacks == 1 }
        _ = try await perform(client, Request(path: "cached/a.txt"))
        _ = try await perform(client, Request(path: "docs/missing.txt"))
        await client.close()
    }

    @Test("status --json passes the status-report schema and says what happened; the table reads the same")
    func statusJSON() async throws {
        try await TestCluster.with(metricsCluster()) { cluster in
            try await makeTraffic(cluster)
            let json = try await Spawned.run(Executables.monarch, ["status", "--json", "--address", "\(cluster.clientAddress)"])
            #expect(json.status == 0, "\(json.stderr)")
            #expect(json.stderr.isEmpty, "\(json.stderr)")
            let verdict = try await python("""
                import json, sys, jsonschema
                schema = json.load(open(sys.argv[1] + "/schemas/status-report.schema.json"))
                report = json.loads(sys.argv[2])
                errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(report)]
                print("valid" if not errors else "invalid: " + "; ".join(errors))
                """, [protocolsFolder, String(decoding: json.stdout, as: UTF8.self)])
            #expect(verdict.hasPrefix("valid"), "\(verdict)")
            let report = try JSONDecoder().decode(StatusReport.self, from: Data(json.stdout))
            #expect(report.version == MonarchRelease.version)
            #expect(Set(report.pools.map(\.kind)) == ["bundle", "cache"])
            #expect(report.pools.allSatisfy { $0.state == .ok && $0.live == 1 && $0.desired == 1 })
            #expect(report.workers.map(\.id).sorted() == ["bundle-1", "cache-1"])
            #expect(report.workers.allSatisfy { $0.local && $0.state == .ready && ($0.rssBytes ?? 0) > 1 << 20 })
            #expect(report.answersBySource["cache"] == 1)
            #expect(report.answersBySource["bundle"] == 3)
            #expect(report.failuresByCode["exhausted"] == 1)
            let cached = try #require(report.domains.first { $0.name == "cached" })
            #expect(cached.requests == 2 && cached.hits == 1 && cached.hitRatio == 0.5)
            #expect(cached.p50Ms > 0 && cached.p99Ms >= cached.p50Ms && cached.p999Ms >= cached.p99Ms)

            let table = try await Spawned.run(Executables.monarch, ["status", "--address", "\(cluster.clientAddress)"])
            let text = String(decoding: table.stdout, as: UTF8.self)
            for fragment in [
                "POOL", "bundle-1", "cache-1", "ready", "DOMAIN", "HOT HITS", "50.0%", "answers by source: bundle 3, cache 1",
                "watches 0 · changes sent 0", "hot tier ",
            ] {
                #expect(text.contains(fragment), "no \(fragment) in:\n\(text)")
            }
        }
    }

    @Test("status --watch redraws every second until interrupted")
    func statusWatch() async throws {
        try await TestCluster.with(ClusterOptions()) { cluster in
            let watching = try Spawned(Executables.monarch, ["status", "--watch", "--address", "\(cluster.clientAddress)"])
            func frames() -> Int {
                watching.stdout.text.components(separatedBy: "\u{1B}[H\u{1B}[2J").filter { $0.contains("POOL") }.count
            }
            try await eventually("the first frame") { frames() >= 1 }
            let first = ContinuousClock.now
            try await eventually("a second frame") { frames() >= 2 }
            let period = ContinuousClock.now - first
            #expect(period > .milliseconds(200) && period < .seconds(5), "redrawn after \(period), not about a second")
            #expect(watching.isRunning, "it redraws until interrupted")
            watching.signal(SIGINT)
            _ = try await watching.waitForExit(timeout: 10)
            #expect(frames() >= 2, "\(frames()) frames")
        }
    }

    @Test("The metrics endpoint serves Prometheus text that Prometheus's own parser reads, with the counters it promises")
    func metrics() async throws {
        try await TestCluster.with(metricsCluster()) { cluster in
            try await makeTraffic(cluster)
            let url = try await cluster.metricsURL()
            let summary = try await python("""
                import json, sys, urllib.request
                from prometheus_client.parser import text_string_to_metric_families
                text = urllib.request.urlopen(sys.argv[1], timeout=10).read().decode()
                samples = {}
                for family in text_string_to_metric_families(text):
                    for sample in family.samples:
                        labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
                        samples[f"{sample.name}{{{labels}}}"] = sample.value
                print(json.dumps(samples))
                """, [url])
            let samples = try JSONDecoder().decode([String: Double].self, from: Data(summary.utf8))
            #expect(samples["monarch_requests_total{domain=cached}"] == 2)
            #expect(samples["monarch_requests_total{domain=static}"] == 3)
            #expect(samples["monarch_answers_total{domain=cached,source=cache,status=200}"] == 1)
            #expect(samples["monarch_failures_total{code=exhausted,domain=static}"] == 1)
            #expect(samples["monarch_cache_hits_total{domain=cached}"] == 1)
            #expect(samples["monarch_cache_misses_total{domain=cached}"] == 1)
            #expect(samples["monarch_write_backs_total{result=stored}"] == 1)
            #expect(samples["monarch_workers{kind=bundle,state=ready}"] == 1)
            #expect(samples["monarch_watches{}"] == 0)
            #expect(samples["monarch_watch_events_total{result=dropped}"] == 0)
            #expect(samples["monarch_request_duration_seconds_count{domain=static}"] == 3)
            #expect(samples["monarch_request_duration_seconds_bucket{domain=static,le=+Inf}"] == 3)
            #expect(samples["monarch_cache_evictions_total{kind=cache}"] == 0)
            #expect(samples.keys.contains { $0.hasPrefix("monarch_requests_in_flight") })
        }
    }

    @Test("A scrape with six cache workers that never answer is still served: they are asked at once, not in turn")
    func metricsWithSilentCacheWorkers() async throws {
        try await TestCluster.with(metricsCluster()) { cluster in
            // Six cache workers that answer no status: asked in turn, a second each, the scrape
            // would outlast the endpoint's 5 s per connection.
            var silent: [FakeWorker] = []
            for index in 1...6 { silent.append(try await FakeWorker(at: cluster.workerPath, kind: "cache", name: "silent-\(index)")) }
            let url = try await cluster.metricsURL()
            let lines = try await python("""
                import sys, urllib.request
                text = urllib.request.urlopen(sys.argv[1], timeout=30).read().decode()
                print(sum(1 for line in text.splitlines() if line.startswith("monarch_cache_evictions_total")))
                """, [url])
            #expect(lines.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "\(lines)")
            _ = silent
        }
    }

    @Test("Sixteen connections that never send a request do not keep a scrape out")
    func idleConnectionsDoNotBlockScrapes() async throws {
        try await TestCluster.with(metricsCluster()) { cluster in
            let url = try await cluster.metricsURL()
            let status = try await python("""
                import socket, sys, time, urllib.parse, urllib.request
                url = sys.argv[1]
                port = urllib.parse.urlparse(url).port
                idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(16)]
                time.sleep(0.2)
                print(urllib.request.urlopen(url, timeout=10).status)
                """, [url])
            #expect(status.trimmingCharacters(in: .whitespacesAndNewlines) == "200")
        }
    }

    @Test("With a token, a scrape needs Authorization: Bearer; other paths are 404")
    func metricsToken() async throws {
        try await TestCluster.with(metricsCluster(token: "sesame")) { cluster in
            let url = try await cluster.metricsURL()
            let codes = try await python("""
                import sys, urllib.request, urllib.error
                def code(url, headers):
                    try:
                        return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10).status
                    except urllib.error.HTTPError as error:
                        return error.code
                url = sys.argv[1]
                print(code(url, {}), code(url, {"Authorization": "Bearer wrong"}),
                      code(url, {"Authorization": "Bearer sesame"}), code(url.replace("/metrics", "/other"), {}))
                """, [url])
            #expect(codes.trimmingCharacters(in: .whitespacesAndNewlines) == "401 401 200 404")
        }
    }
}
