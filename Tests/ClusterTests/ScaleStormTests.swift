import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Monarch
import MonarchClient
import MonarchWire
import Synchronization
import Testing
import TestOrigins

/// Many scales at once, and scales larger than admission takes in one go (issue 26, finding 6).
@Suite("Scale storms")
struct ScaleStormTests {
    static let hello = ClusterOptions.files["docs/hello.txt"]!

    /// The fewest bundle workers serving seen by a poll of `status`, until stopped.
    final class LiveFloor: Sendable {
        private let lowest = Mutex<Int?>(nil)
        private let running = Atomic<Bool>(true)
        private let task = Mutex<Task<Void, Never>?>(nil)

        init(_ cluster: TestCluster) {
            task.withLock {
                $0 = Task { [self] in
                    while running.load(ordering: .relaxed) {
                        if let status = try? await cluster.status(),
                            let live = status.typed.pools.first(where: { $0.kind == "bundle" })?.live
                        {
                            lowest.withLock { $0 = min($0 ?? live, live) }
                        }
                        try? await Task.sleep(for: .milliseconds(20))
                    }
                }
            }
        }

        /// Stops polling; the fewest seen.
        func stop() async -> Int? {
            running.store(false, ordering: .relaxed)
            await task.withLock { $0 }?.value
            return lowest.withLock { $0 }
        }
    }

    /// Sends every scale of `targets` on one connection, `spacing` apart (none: all at once),
    /// then reads their answers, by id (from 1).
    static func scaleAll(_ cluster: TestCluster, _ targets: [Int], spacing: Duration = .zero) async throws -> [Int: WireMessage] {
        try await offPool {
            let socket = try RawSocket(path: cluster.folder.path + "/c.sock", receiveTimeoutSeconds: 120)
            socket.send(.hello(Hello(role: .client, token: cluster.token)))
            guard case .welcome? = try socket.nextMessage() else { throw SpawnError("no welcome") }
            for (index, count) in targets.enumerated() {
                socket.send(.scale(ScaleMessage(id: MessageID(index + 1), kind: "bundle", count: count)))
                // Spread out, so that scales arrive while the pool is moving.
                if spacing > .zero { usleep(UInt32(spacing.wholeMilliseconds * 1000)) }
            }
            var answers: [Int: WireMessage] = [:]
            while answers.count < targets.count {
                guard let message = try socket.nextMessage() else { throw SpawnError("the coordinator closed the connection") }
                switch message {
                case .result(let result): answers[Int(result.id)] = message
                case .failure(let failure): answers[Int(failure.id)] = message
                default: continue
                }
            }
            return answers
        }
    }

    /// Expects every answer to be a report, the last one's count the last target, and those
    /// ending elsewhere than asked marked superseded; then the pool at the last target.
    static func expectConverged(_ cluster: TestCluster, _ targets: [Int], _ answers: [Int: WireMessage]) async throws {
        for (id, answer) in answers.sorted(by: { $0.key < $1.key }) {
            guard case .result(let result) = answer else {
                Issue.record("scale #\(id) (to \(targets[id - 1])) was answered \(answer)")
                continue
            }
            let report = try result.report(as: ScaleReport.self)
            #expect(report.kind == "bundle")
            if report.count != targets[id - 1] {
                #expect(report.superseded == true && report.requested == targets[id - 1], "scale #\(id): \(report)")
            }
            if id == targets.count { #expect(report.count == targets.last, "the last scale reports its own target") }
        }
        let last = targets.last ?? 0
        let status = try await cluster.status()
        #expect(status.bundleWorkers.count == last, "\(status.bundleWorkers.map(\.id))")
        let pool = status.typed.pools.first { $0.kind == "bundle" }
        #expect(pool?.desired == last && pool?.state == .ok, "\(String(describing: pool))")
        #expect(status.typed.workers.filter { $0.kind == "bundle" }.count == last, "no worker left starting or draining")
    }

    @Test("Twenty scales at once on one connection, then twenty spread out: each is answered with a report, the pool ends at the last target, and no request lacks a worker")
    func scaleStorms() async throws {
        try await TestCluster.with(ClusterOptions(bundleCount: 2, latency: "20ms")) { cluster in
            let load = try await SteadyLoad(cluster, clients: 6, expected: Self.hello)
            let floor = LiveFloor(cluster)
            try await eventually("answers before the storm") { load.answered > 10 }
            let atOnce = [1, 5, 2, 4, 1, 3, 5, 1, 2, 5, 4, 1, 3, 2, 5, 1, 4, 2, 5, 3]
            try await Self.expectConverged(cluster, atOnce, try await Self.scaleAll(cluster, atOnce))
            let spread = [4, 1, 5, 2, 3, 1, 5, 4, 2, 1, 3, 5, 2, 4, 1, 5, 3, 2, 4, 2]
            try await Self.expectConverged(cluster, spread, try await Self.scaleAll(cluster, spread, spacing: .milliseconds(50)))
            let answered = load.answered
            try await eventually("answers after the storms") { load.answered > answered + 10 }
            await load.stop()
            let lowest = await floor.stop()
            let errors = load.errors
            #expect(errors.count == 0, "\(errors.prefix(5))")
            #expect((lowest ?? 0) >= 1, "every target was at least 1, yet \(lowest ?? 0) bundle workers served at one point")
        }
    }

    /// A bundle-only cluster starting `count` workers, with 6 handshake slots (so a scale to
    /// 24 is far past what admission takes at once) and room for 64 workers.
    static func bundlesPastTheHandshakeLimit(count: Int) -> ClusterOptions {
        var options = ClusterOptions()
        options.custom = """
            domains:
              static: [bundle]
            routes:
              - match: "docs/..."
                domain: static
            workers:
              bundle: {count: \(count), root: $FOLDER/Bundle}
            limits:
              handshakes: 6
              workers: 64

            """
        return options
    }

    @Test("A scale far past the handshake limit starts its workers in batches: every one registers, the pool does not fail, and it scales back down")
    func largeScaleInBatches() async throws {
        let options = Self.bundlesPastTheHandshakeLimit(count: 1)
        try await TestCluster.with(options) { cluster in
            let client = try await cluster.connect()
            let up = try await within(240, "scale bundle=24") { try await client.scale("bundle", to: 24) }
            #expect(up.count == 24 && up.started.count == 23, "\(up)")
            let status = try await cluster.status()
            #expect(status.bundleWorkers.count == 24)
            let pool = status.typed.pools.first { $0.kind == "bundle" }
            #expect(pool?.state == .ok && pool?.live == 24, "\(String(describing: pool))")
            #expect(!cluster.up.stderr.text.contains("limits.handshakes"), "no worker was turned away at the handshake limit")
            #expect(try await perform(client, Request(path: "docs/hello.txt")).success?.status == 200)
            let down = try await within(120, "scale bundle=1") { try await client.scale("bundle", to: 1) }
            #expect(down.stopped.count == 23, "\(down)")
            #expect(try await cluster.status().bundleWorkers.map(\.id) == ["bundle-1"])
            await client.close()
        }
    }

    @Test("monarch up with more workers than the handshake limit takes at once starts them in batches and gets ready")
    func largeStartInBatches() async throws {
        let options = Self.bundlesPastTheHandshakeLimit(count: 24)
        try await TestCluster.with(options) { cluster in
            let status = try await cluster.status()
            #expect(status.bundleWorkers.count == 24)
            #expect(status.typed.pools.first { $0.kind == "bundle" }?.state == .ok)
            #expect(!cluster.up.stderr.text.contains("limits.handshakes"), "no worker was turned away at the handshake limit")
        }
    }
}
