import Histogram
import MonarchLoop
import MonarchWire

/// Why a load run could not take place.
public struct BenchFailure: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var description: String

    /// A failure described by `description`.
    public init(_ description: String) { self.description = description }
}

/// A closed-loop load generator for the Monarch wire protocol.
///
/// It drives its connections from event loops of its own (``BenchPlan/loopCount``, the
/// connections dealt out among them), with callbacks on each loop's thread and no task per
/// request: each connection pipelines ``BenchPlan/inFlight`` requests under increasing ids
/// and sends the next one as each answer arrives. Requests are encoded with `MessageCodec`;
/// responses are read with a scan that finds the id, status, source and body length without
/// decoding the body (anything else goes through `MessageCodec`). Latencies go into an
/// HdrHistogram in microseconds.
public enum LoadEngine {
    /// Connects, runs `plan`, closes, and reports what was measured.
    ///
    /// Answers are counted when they arrive inside the measured window (after the warm-up, for
    /// the duration); once it is over no request is sent, and the answers still due are
    /// awaited at most ``BenchPlan/drainTimeout``.
    ///
    /// - Throws: ``BenchFailure`` when no connection could be made.
    public static func run(_ plan: BenchPlan) async throws(BenchFailure) -> BenchReport {
        guard plan.connections >= 1, plan.inFlight >= 1 else {
            throw BenchFailure("connections and requests in flight must be at least 1")
        }
        let loopCount = plan.loopCount
        var loops: [EventLoop] = []
        defer {
            for loop in loops { _ = loop.shutdown() }
        }
        for index in 0..<loopCount {
            do {
                loops.append(try EventLoop(name: "bench-\(index)"))
            } catch {
                throw BenchFailure("cannot start an event loop: \(error)")
            }
        }
        let sampler: ZipfSampler?
        if case .keys(_, let count, let exponent) = plan.paths {
            sampler = ZipfSampler(count: count, exponent: exponent)
        } else {
            sampler = nil
        }
        var shards: [LoadShard] = []
        var first = 0
        for (index, loop) in loops.enumerated() {
            let count = plan.connections / loopCount + (index < plan.connections % loopCount ? 1 : 0)
            shards.append(LoadShard(
                loop: loop, plan: plan, index: index, shardCount: loopCount, connections: count,
                firstConnection: first, sampler: sampler))
            first += count
        }
        defer {
            for shard in shards { shard.loop.execute { shard.closeAll() } }
        }

        await withTaskGroup(of: Void.self) { group in
            for shard in shards { group.addTask { await shard.connectAll() } }
        }
        let connected = await withTaskGroup(of: (Int, String?).self) { group in
            for shard in shards {
                group.addTask { await shard.connectionOutcome() }
            }
            var total = 0
            var firstError: String?
            for await (count, error) in group {
                total += count
                if firstError == nil { firstError = error }
            }
            return (total, firstError)
        }
        guard connected.0 > 0 else {
            throw BenchFailure("cannot connect to \(plan.address): \(connected.1 ?? "no connection was made")")
        }

        let start = monotonicNanoseconds()
        let eachOnce: Bool
        if case .eachOnce = plan.paths { eachOnce = true } else { eachOnce = false }
        let measureStart = eachOnce ? start : start + nanoseconds(plan.warmup)
        let measureEnd = measureStart + nanoseconds(plan.duration)
        let results = await withTaskGroup(of: ShardResult.self) { group in
            for shard in shards {
                group.addTask { await shard.run(start: measureStart, end: measureEnd) }
            }
            var all: [ShardResult] = []
            for await result in group { all.append(result) }
            return all
        }

        var merged = ShardResult()
        for result in results {
            merged.connected += result.connected
            merged.connectFailures += result.connectFailures
            merged.firstConnectError = merged.firstConnectError ?? result.firstConnectError
            merged.answered += result.answered
            merged.bodyBytes += result.bodyBytes
            merged.latency.add(result.latency)
            merged.errors.merge(result.errors, uniquingKeysWith: +)
            merged.statuses.merge(result.statuses, uniquingKeysWith: +)
            merged.sources.merge(result.sources, uniquingKeysWith: +)
            merged.unfinished += result.unfinished
            merged.finishedAt = max(merged.finishedAt, result.finishedAt)
        }
        var seconds = Double(nanoseconds(plan.duration)) / 1e9
        if eachOnce, merged.finishedAt > measureStart {
            seconds = Double(min(merged.finishedAt, measureEnd) - measureStart) / 1e9
        }
        return BenchReport(plan: plan, loops: loopCount, seconds: seconds, result: merged)
    }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let parts = duration.components
        return UInt64(max(0, parts.seconds)) * 1_000_000_000 + UInt64(max(0, parts.attoseconds) / 1_000_000_000)
    }
}

extension LoadShard {
    /// How many connections were welcomed, and the first reason one was not.
    func connectionOutcome() async -> (Int, String?) {
        (try? await loop.submit { (self.result.connected, self.result.firstConnectError) }) ?? (0, "loop stopped")
    }
}
