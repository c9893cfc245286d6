import ArgumentParser
import Foundation
import Monarch
import MonarchClient
import MonarchLoop
import MonarchWire

/// `monarch-bench cache-hits`: requests per second answered by the cache worker through the
/// coordinator, for a 1 KB resource.
struct CacheHitsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache-hits",
        abstract: "Cache hits per second through the coordinator (1 KB bodies), at each number of requests in flight.",
        discussion: """
            Starts a cluster (one memory-only cache worker in front of a bundle worker), stores \
            one 1 KB file per in-flight slot in the cache (write-back), then each slot reads its \
            own key over and over on one pipelined client connection. Distinct keys per slot, so \
            coalescing of identical reads plays no part.
            """
    )

    @Option(help: "Requests kept in flight, comma-separated.") var inFlight = "1,64"
    @Option(help: "Seconds measured per figure.") var seconds = 5.0
    @Option(help: "Body bytes.") var bytes = 1024

    func run() async throws {
        let levels = inFlight.split(separator: ",").compactMap { Int($0) }
        let slots = levels.max() ?? 1
        let body = [UInt8]((0..<bytes).map { UInt8(ascii: "a") &+ UInt8($0 % 26) })
        var files: [String: [UInt8]] = [:]
        for slot in 0..<slots { files["Bundle/hits/\(slot).txt"] = body }
        let cluster = try BenchCluster(configuration: """
            domains:
              bench: [cache, bundle]
            routes:
              - match: "hits/..."
                domain: bench
            workers:
              cache: { count: 1, memory: 64MB }
              bundle: { count: 1, root: Bundle }

            """, files: files)
        defer { cluster.stop() }
        let loop = try EventLoop(name: "bench-client")
        defer { _ = loop.shutdown() }
        let client = try await MonarchClient.connect(to: cluster.clientAddress, options: .init(loop: loop))
        // Prime: every key once, then until the cache answers each.
        for slot in 0..<slots {
            var source: String?
            for _ in 0..<200 where source != "cache" {
                source = try await client.perform(Request(path: "hits/\(slot).txt")).source
                if source != "cache" { try await Task.sleep(for: .milliseconds(5)) }
            }
            guard source == "cache" else { throw BenchError("hits/\(slot).txt never came from the cache") }
        }
        say("cache hits through the coordinator, \(bytes)-byte body, \(seconds) s per figure")
        for level in levels {
            let run = LoadRun(inFlight: level, duration: .milliseconds(Int64(seconds * 1000)))
            let figures = await withTaskExecutorPreference(loop) {
                await run.run { slot, _ in
                    guard let response = try? await client.perform(Request(path: "hits/\(slot).txt")) else { return false }
                    return response.source == "cache" && response.body.count == body.count
                }
            }
            say(figures.line("  \(level) in flight"))
        }
        await client.close()
    }
}
