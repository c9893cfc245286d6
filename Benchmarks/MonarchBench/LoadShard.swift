#if canImport(Glibc)
import Glibc
#endif
import Histogram
import MonarchLoop
import MonarchWire

/// The monotonic clock in nanoseconds.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
}

/// What one event loop's connections measured.
struct ShardResult: Sendable {
    var connected = 0
    var connectFailures = 0
    var firstConnectError: String?
    var answered = 0
    var bodyBytes = 0
    var latency = Histogram<UInt64>(highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)
    var errors: [String: Int] = [:]
    var statuses: [Int: Int] = [:]
    var sources: [String: Int] = [:]
    /// Requests still unanswered when the shard stopped waiting.
    var unfinished = 0
    /// When the last answer the run waited for came (a pass over each key that ended early).
    var finishedAt: UInt64 = 0
}

/// The connections of one event loop and what they measured. Everything here runs on the
/// loop's thread, except the two `async` entry points, which hop onto it.
final class LoadShard: @unchecked Sendable {
    let loop: EventLoop
    let plan: BenchPlan
    /// This shard's number, and how many there are (keys of a pass are dealt out by it).
    let index: Int
    let shardCount: Int
    /// The connections to open, numbered from `firstConnection`.
    private let connectionCount: Int
    private let firstConnection: Int

    private let template: PathTemplate?
    private let sampler: ZipfSampler?
    private var random: SplitMix64
    private var connections: [BenchConnection] = []

    private(set) var result = ShardResult()
    /// Requests sent and not yet answered, on every connection of the shard.
    var outstanding = 0
    /// When counting starts and sending stops (monotonic nanoseconds).
    private(set) var measureStart: UInt64 = .max
    private(set) var measureEnd: UInt64 = .max
    private var stopped = false
    /// The next key of a pass over each key (this shard's share: index, index + shardCount, …).
    private var nextOnce = 0

    private var connectsStarted = 0
    private var connectsPending = 0
    private var readyWaiter: CheckedContinuation<Void, Never>?
    private var doneWaiter: CheckedContinuation<ShardResult, Never>?
    private var endTimer: LoopTimer?
    private var finished = false

    /// Handshakes this shard keeps under way at once, so that many connections never crowd
    /// the coordinator's queue of connections waiting for their hello.
    private static let handshakesAtOnce = 32
    /// How long a connection may take to be welcomed before it counts as failed.
    private static let handshakeTimeoutMs: UInt64 = 15_000

    init(
        loop: EventLoop, plan: BenchPlan, index: Int, shardCount: Int, connections: Int, firstConnection: Int,
        sampler: ZipfSampler?
    ) {
        self.loop = loop
        self.plan = plan
        self.index = index
        self.shardCount = shardCount
        self.connectionCount = connections
        self.firstConnection = firstConnection
        self.sampler = sampler
        switch plan.paths {
        case .single: template = nil
        case .keys(let text, _, _), .eachOnce(let text, _): template = PathTemplate(text)
        }
        random = SplitMix64(seed: 0x5EED_0000 &+ UInt64(index) &* 0x1_0000_0001 &+ monotonicNanoseconds())
    }

    // MARK: Connecting

    /// Opens the shard's connections and waits until each has been welcomed or has failed.
    func connectAll() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.execute {
                self.readyWaiter = continuation
                if let timer = try? LoopTimer(on: self.loop) {
                    self.endTimer = timer
                    timer.start(afterMs: Self.handshakeTimeoutMs) {
                        for connection in self.connections {
                            connection.abandonHandshake("no welcome within \(Self.handshakeTimeoutMs / 1000) s")
                        }
                    }
                }
                self.startMoreConnects()
            }
        }
    }

    private func startMoreConnects() {
        while connectsStarted < connectionCount && connectsPending < Self.handshakesAtOnce {
            let connection = BenchConnection(shard: self, number: firstConnection + connectsStarted)
            connectsStarted += 1
            connectsPending += 1
            connections.append(connection)
            connection.connect()
        }
        if connectsPending == 0, let waiter = readyWaiter {
            readyWaiter = nil
            endTimer?.close()
            endTimer = nil
            waiter.resume()
        }
    }

    /// A connection was welcomed (`error` nil) or could not be made.
    func handshakeEnded(error: String?) {
        connectsPending -= 1
        if let error {
            result.connectFailures += 1
            if result.firstConnectError == nil { result.firstConnectError = error }
        } else {
            result.connected += 1
        }
        startMoreConnects()
    }

    // MARK: Running

    /// Runs the load from now until `end`, counting answers from `start` on, then waits for
    /// the answers still due (at most the plan's drain time) and returns what was measured.
    func run(start: UInt64, end: UInt64) async -> ShardResult {
        await withCheckedContinuation { (continuation: CheckedContinuation<ShardResult, Never>) in
            loop.execute {
                self.doneWaiter = continuation
                self.measureStart = start
                self.measureEnd = end
                let now = monotonicNanoseconds()
                do {
                    let timer = try LoopTimer(on: self.loop)
                    self.endTimer = timer
                    timer.start(afterMs: end > now ? (end - now) / 1_000_000 + 1 : 0) { self.timeIsUp() }
                } catch {
                    self.record(error: "timer")
                    self.finish()
                    return
                }
                for connection in self.connections where connection.isReady {
                    connection.fill()
                }
                self.finishIfDrained()
            }
        }
    }

    /// Whether another request may go out now.
    func maySend(now: UInt64) -> Bool {
        !stopped && now < measureEnd
    }

    /// The path of the next request; nil when a pass over each key has handed out its last.
    func nextPath() -> String? {
        switch plan.paths {
        case .single(let path):
            return path
        case .keys(_, let count, _):
            let rank = sampler?.rank(for: random.unit()) ?? Int(random.next() % UInt64(count))
            return template!.path(rank)
        case .eachOnce(_, let count):
            let key = index + nextOnce * shardCount
            guard key < count else { return nil }
            nextOnce += 1
            return template!.path(key)
        }
    }

    /// Counts an answered request that completed at `now`.
    func recordResponse(now: UInt64, sentAt: UInt64, status: Int, source: String?, bodyBytes: Int) {
        guard now >= measureStart && now < measureEnd else { return }
        if let expected = plan.bodyCheck, expected != bodyBytes {
            result.errors["bodyMismatch", default: 0] += 1
            return
        }
        result.answered += 1
        result.bodyBytes += bodyBytes
        result.statuses[status, default: 0] += 1
        result.sources[source ?? "-", default: 0] += 1
        result.latency.record(max(1, (now &- sentAt) / 1000))
        result.finishedAt = now
    }

    /// Counts a request that failed with `code` at `now` (counted only while measuring).
    func recordFailure(now: UInt64, code: String) {
        guard now >= measureStart && now < measureEnd else { return }
        result.errors[code, default: 0] += 1
        result.finishedAt = now
    }

    /// Counts an error whenever it happens.
    func record(error code: String, count: Int = 1) {
        result.errors[code, default: 0] += count
    }

    /// Called when answers are due no more: the shard finishes once nothing is outstanding.
    func finishIfDrained() {
        guard !finished, outstanding == 0, doneWaiter != nil else { return }
        if stopped || monotonicNanoseconds() >= measureEnd || passIsOver {
            finish()
        }
    }

    private var passIsOver: Bool {
        if case .eachOnce(_, let count) = plan.paths { return index + nextOnce * shardCount >= count }
        return false
    }

    private func timeIsUp() {
        stopped = true
        guard outstanding > 0 else {
            finish()
            return
        }
        let drainMs = UInt64(max(0, plan.drainTimeout.components.seconds)) * 1000
            + UInt64(plan.drainTimeout.components.attoseconds / 1_000_000_000_000_000)
        endTimer?.start(afterMs: drainMs) { self.finish() }
    }

    private func finish() {
        guard !finished else { return }
        finished = true
        stopped = true
        endTimer?.close()
        endTimer = nil
        result.unfinished = outstanding
        if result.finishedAt == 0 { result.finishedAt = min(monotonicNanoseconds(), measureEnd) }
        let waiter = doneWaiter
        doneWaiter = nil
        waiter?.resume(returning: result)
    }

    /// Closes every connection. Loop thread.
    func closeAll() {
        for connection in connections { connection.close() }
        connections.removeAll()
        endTimer?.close()
        endTimer = nil
    }
}
