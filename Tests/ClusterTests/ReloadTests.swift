import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Monarch
import MonarchClient
import Testing

/// SIGHUP reloads the configuration file of a running `monarch up`: routes, domains, limits
/// and pool sizes, without dropping a request; a file that cannot be applied changes nothing.
@Suite("Reload", .serialized)
struct ReloadTests {
    @Test("SIGHUP applies new routes and a pool size while a slow request is in flight; a broken file changes nothing")
    func hangUpReloads() async throws {
        try await TestCluster.with(ClusterOptions(latency: "1500ms")) { cluster in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            // Not routed yet: no route matches notes/….
            guard case .failure(let before) = try await perform(client, Request(path: "notes/hello.txt")) else {
                Issue.record("notes/hello.txt answered before the reload")
                return
            }
            #expect(before.code == .noRoute)

            // A read that takes 1.5 s is in flight across the reload.
            let slow = Task { try await perform(client, Request(path: "docs/hello.txt")) }
            try await eventually("the slow read to reach the bundle") { try await cluster.status().inFlight == 1 }

            let original = try String(contentsOfFile: cluster.configPath, encoding: .utf8)
            let reloaded = original
                .replacingOccurrences(of: "routes:\n", with: "routes:\n  - match: \"notes/...\"\n    domain: static\n")
                .replacingOccurrences(of: "bundle: {count: 1,", with: "bundle: {count: 2,")
            #expect(reloaded != original)
            try reloaded.write(toFile: cluster.configPath, atomically: true, encoding: .utf8)
            cluster.up.signal(SIGHUP)
            try await eventually("the reload to be logged", timeout: 30) { cluster.up.stderr.text.contains("reloaded: 3 routes") }

            let during = try await slow.value
            #expect(during.success.map { String(decoding: $0.body, as: UTF8.self) } == "Hello, Monarch!\n")
            // notes/hello.txt now reaches the bundle (which has no such file: a miss, not noRoute).
            guard case .failure(let after) = try await perform(client, Request(path: "notes/hello.txt")) else {
                Issue.record("the bundle has no notes/hello.txt")
                return
            }
            #expect(after.code == .exhausted, "\(after)")
            try await eventually("the bundle pool to run 2 workers", timeout: 60) {
                try await cluster.status().bundleWorkers.count == 2
            }

            // A file that does not load changes nothing, and says why.
            try "routes: [nonsense\n".write(toFile: cluster.configPath, atomically: true, encoding: .utf8)
            cluster.up.signal(SIGHUP)
            try await eventually("the refusal to be logged", timeout: 30) {
                cluster.up.stderr.text.contains("reload refused, nothing changed")
            }
            guard case .failure(let still) = try await perform(client, Request(path: "notes/hello.txt")) else {
                Issue.record("the bundle has no notes/hello.txt")
                return
            }
            #expect(still.code == .exhausted, "the reloaded route stays: \(still)")
            #expect(try await cluster.status().bundleWorkers.count == 2)
            #expect(cluster.up.isRunning)
        }
    }
}
