import Foundation
import Testing

/// `monarch bench` as a process, for about a second at a time against a small cluster.
@Suite("monarch bench")
struct BenchCommandTests {
    private func object(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(
            try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            "not one JSON object: \(String(decoding: bytes, as: UTF8.self))")
    }

    private func bench(_ cluster: TestCluster, _ arguments: [String]) async throws -> (status: Int32, report: [String: Any]?, stderr: String) {
        let run = try await Spawned.run(
            Executables.monarch, ["bench", "--address", "\(cluster.clientAddress)", "--json"] + arguments, timeout: 60)
        return (run.status, run.status == 2 ? nil : try object(run.stdout), run.stderr)
    }

    @Test("Answers counted, no errors, percentiles in order, hits from the cache; keys, each-once and a body check")
    func benchAgainstACluster() async throws {
        let options = ClusterOptions(custom: """
            domains:
              static: [cache, bundle]
            routes:
              - match: "docs/..."
                domain: static
            workers:
              cache: { count: 1, memory: 8MB }
              bundle: { count: 1, root: Bundle }

            """)
        try await TestCluster.with(options) { cluster in
            for key in 0..<8 { try cluster.folder.write("Bundle/docs/keys/\(key).txt", String(repeating: "k", count: 100)) }

            let hot = try await bench(cluster, [
                "--path", "docs/hello.txt", "--connections", "3", "--in-flight", "2", "--duration", "1s", "--warmup", "300ms",
                "--body-check", "16",
            ])
            #expect(hot.status == 0, "\(hot.stderr)")
            let report = try #require(hot.report)
            let answered = try #require(report["answered"] as? Int)
            #expect(answered > 0)
            #expect(report["errorCount"] as? Int == 0, "\(report)")
            #expect((report["errors"] as? [String: Any])?.isEmpty == true, "\(report)")
            #expect(report["connected"] as? Int == 3)
            #expect(report["inFlight"] as? Int == 2)
            #expect((report["rps"] as? Double ?? 0) > 0)
            #expect((report["statuses"] as? [String: Int])?["200"] == answered)
            // Once the first answer is written back, every read of the one path is a cache hit.
            #expect(((report["sources"] as? [String: Int])?["cache"] ?? 0) > 0, "\(report)")
            let latency = try #require(report["latencyUs"] as? [String: Any])
            let order = try ["min", "p50", "p90", "p99", "p999", "max"].map { try #require(latency[$0] as? Int, "\($0)") }
            #expect(order == order.sorted(), "percentiles out of order: \(latency)")
            #expect(order[0] > 0)

            // Every key once, in order: exactly that many answers.
            let pass = try await bench(cluster, [
                "--keys", "8", "--path-template", "docs/keys/{n}.txt", "--each-once", "--connections", "2", "--body-check", "100",
            ])
            #expect(pass.status == 0, "\(pass.stderr)")
            #expect(pass.report?["answered"] as? Int == 8, "\(pass.report ?? [:])")
            #expect(pass.report?["errorCount"] as? Int == 0)

            // A Zipf mix over the keys, a query per request (the cache never answers one).
            let mixed = try await bench(cluster, [
                "--keys", "8", "--path-template", "docs/keys/{n}.txt", "--zipf", "1.1", "--distinct-queries", "--policy", "noCache",
                "--connections", "2", "--duration", "500ms", "--warmup", "0s",
            ])
            #expect(mixed.status == 0, "\(mixed.stderr)")
            #expect((mixed.report?["answered"] as? Int ?? 0) > 0)
            #expect(mixed.report?["sources"] as? [String: Int] == ["bundle": mixed.report?["answered"] as? Int ?? -1])

            // A body of the wrong length is an error, and nothing answered exits 1.
            let wrong = try await bench(cluster, [
                "--path", "docs/hello.txt", "--duration", "300ms", "--warmup", "0s", "--body-check", "17",
            ])
            #expect(wrong.status == 1)
            #expect(((wrong.report?["errors"] as? [String: Int])?["bodyMismatch"] ?? 0) > 0, "\(wrong.report ?? [:])")
            #expect(wrong.report?["answered"] as? Int == 0)

            // Some answers failed (keys 8 and 9 are not in the bundle): exit 1, the codes named.
            let partly = try await bench(cluster, [
                "--keys", "10", "--path-template", "docs/keys/{n}.txt", "--each-once", "--connections", "1",
            ])
            #expect(partly.status == 1, "\(partly.stderr)")
            #expect(partly.report?["answered"] as? Int == 8, "\(partly.report ?? [:])")
            #expect(partly.report?["errorCount"] as? Int == 2, "\(partly.report ?? [:])")
            #expect(partly.stderr.contains("2 requests failed (exhausted 2)"), "\(partly.stderr)")
            #expect(partly.stderr.contains("not a result"), "\(partly.stderr)")
        }
    }

    @Test("No coordinator: exit 2 with the reason; invalid options: a usage error")
    func benchFailures() async throws {
        let unreachable = try await Spawned.run(
            Executables.monarch, ["bench", "--address", "unix:/nonexistent/x.sock", "--path", "a", "--duration", "1s"])
        #expect(unreachable.status == 2)
        #expect(unreachable.stderr.contains("cannot connect"), "\(unreachable.stderr)")
        for arguments in [["--path", "a", "--keys", "3"], ["--duration", "soon", "--path", "a"], ["--connections", "0", "--path", "a"], []] {
            let invalid = try await Spawned.run(Executables.monarch, ["bench", "--address", "unix:/nonexistent/x.sock"] + arguments)
            #expect(invalid.status == 64, "\(arguments): \(invalid.stderr)")
        }
    }
}
