import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Monarch
import MonarchClient
import Testing

/// Worker settings from the configuration reach the worker processes `monarch up` starts.
@Suite("Worker settings")
struct WorkerSettingsTests {
    static let yaml = """
        domains:
          static: [bundle]
          api: [cache, network]
        routes:
          - match: "api/..."
            domain: api
            upstream: http://127.0.0.1:9/...
          - match: "..."
            domain: static
        workers:
          bundle: {root: Bundle, maxFile: 10, dotfiles: true, logLevel: debug}
          cache: {memory: 1MB, keepStale: 1h, logLevel: warning}
          network:
            allow: [127.0.0.1:9]
            retries: 0
            connectTimeout: 1500ms
            timeout: 5s
            maxRedirects: 1
            maxResponse: 1MB
            maxHostConnections: 2
            capacity: 3

        """

    /// The arguments `pid` was started with, after the executable.
    private func arguments(of pid: Int) throws -> [String] {
        let raw = try #require(FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"))
        return Array(raw.split(separator: 0, omittingEmptySubsequences: false).dropFirst().dropLast())
            .map { String(decoding: $0, as: UTF8.self) }
    }

    @Test("bundle maxFile and dotfiles change what is served; every setting is on its worker's command line")
    func settingsReachTheWorkers() async throws {
        try await TestCluster.with(ClusterOptions(custom: Self.yaml)) { cluster in
            try cluster.folder.write("Bundle/ten.txt", "0123456789")
            try cluster.folder.write("Bundle/eleven.txt", "0123456789A")
            try cluster.folder.write("Bundle/.well-known/x.txt", "hidden")
            let client = try await cluster.connect()

            // maxFile: 10 — ten bytes are served, eleven are too large.
            let ten = try await perform(client, Request(path: "ten.txt"))
            #expect(ten.success?.body == Data("0123456789".utf8))
            let eleven = try await perform(client, Request(path: "eleven.txt"))
            let error = try #require(eleven.failure, "\(eleven)")
            #expect(error.attempts.first?.code == "responseTooLarge", "\(error)")
            #expect(error.attempts.first?.message?.contains("10") == true, "\(error)")

            // dotfiles: true — a hidden path is served (by default it is a miss).
            let hidden = try await perform(client, Request(path: ".well-known/x.txt"))
            #expect(hidden.success?.body == Data("hidden".utf8), "\(hidden)")

            // capacity: 3 is what the network worker announced.
            let status = try await cluster.status(via: client)
            await client.close()
            let network = try #require(status.typed.workers.first { $0.kind == "network" })
            #expect(network.capacity == 3)

            var commandLines: [String: [String]] = [:]
            for worker in status.typed.workers {
                commandLines[worker.kind] = try arguments(of: try #require(worker.pid))
            }
            func has(_ kind: String, _ flag: String, _ value: String? = nil) -> Bool {
                guard let line = commandLines[kind], let at = line.firstIndex(of: flag) else { return false }
                return value == nil || (at + 1 < line.count && line[at + 1] == value)
            }
            #expect(has("bundle", "--max-file-bytes", "10"))
            #expect(has("bundle", "--serve-dotfiles"))
            #expect(has("bundle", "--log-level", "debug"))
            #expect(has("cache", "--memory-bytes", "1048576"))
            #expect(has("cache", "--keep-stale-seconds", "3600"))
            #expect(has("cache", "--log-level", "warning"))
            #expect(has("network", "--retries", "0"))
            #expect(has("network", "--connect-timeout-ms", "1500"))
            #expect(has("network", "--timeout-ms", "5000"))
            #expect(has("network", "--max-redirects", "1"))
            #expect(has("network", "--max-response-bytes", "1048576"))
            #expect(has("network", "--max-host-connections", "2"))
            #expect(has("network", "--capacity", "3"))
            // No logLevel: the level monarch up runs at.
            #expect(has("network", "--log-level", "info"))
        }
    }
}
