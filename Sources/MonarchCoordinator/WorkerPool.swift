import Monarch
import MonarchLoop

/// The workers of one kind, as one provider of the chain: each request goes to the worker
/// with the fewest requests in flight. A worker lost mid-request costs only that attempt: an
/// idempotent request moves to another worker of the pool, and only when none is left does the
/// pool report a failure (and the chain moves on). Any task; the work runs on the loop.
class WorkerPool: RequestProvider, @unchecked Sendable {
    /// The workers' kind, which is also the provider's name.
    let kind: String
    let loop: EventLoop
    /// The registered workers, in registration order. Loop thread only.
    private(set) var workers: [WorkerSession] = []
    /// Where the search for the least loaded worker starts, so ties rotate.
    private var cursor = 0

    init(kind: String, loop: EventLoop) {
        self.kind = kind
        self.loop = loop
    }

    var name: String { kind }

    /// Adds a registered worker; it leaves the pool when its connection ends. Loop thread only.
    func add(_ worker: WorkerSession) {
        workers.append(worker)
    }

    /// Removes a worker whose connection ended. Loop thread only.
    func remove(_ worker: WorkerSession) {
        workers.removeAll { $0 === worker }
    }

    /// The connected workers.
    var connected: [WorkerSession] { workers.filter { $0.lostReason == nil } }

    /// When the trip down the chain must be over: set for the trip's task, so that each
    /// worker is handed the budget that is left (protocol section 5), not the whole of it.
    @TaskLocal static var tripEnd: ContinuousClock.Instant?
    /// When the trip down the chain started (set with ``tripEnd``): write-backs of a trip that
    /// started before an invalidation of their key are dropped.
    @TaskLocal static var tripStart: ContinuousClock.Instant?

    func perform(_ request: Request) async -> ProviderOutcome {
        await withTaskExecutorPreference(loop) { await forward(request) }
    }

    private func forward(_ request: Request) async -> ProviderOutcome {
        loop.preconditionInEventLoop()
        let end = Self.tripEnd ?? request.deadline.map { ContinuousClock.now + $0 }
        var request = request
        var lost: [String] = []
        while true {
            if Task.isCancelled { return .failure(.cancelled) }
            guard let worker = choose(for: request, excluding: lost) else {
                if lost.isEmpty {
                    return .failure(ProviderFailure(code: "unavailable", message: "no \(kind) worker is connected"))
                }
                return .failure(ProviderFailure(
                    code: "workerLost", message: "every \(kind) worker tried was lost mid-request (\(lost.joined(separator: ", ")))"))
            }
            if let end { request.deadline = max(.zero, end - ContinuousClock.now) }
            switch await worker.forward(request) {
            case .answered(let outcome):
                return outcome
            case .lost(let reason) where !request.isIdempotent:
                // The request may have taken effect before the worker was lost: not sent again.
                return .failure(ProviderFailure(
                    code: "workerLost", message: "\(reason); a \(request.method) request is not retried"))
            case .lost:
                lost.append(worker.id)
            }
        }
    }

    /// The worker `request` goes to, not among `excluded` (ids of workers lost during this
    /// request); nil when none is left. Here: the one with the fewest requests in flight.
    func choose(for request: Request, excluding excluded: [String]) -> WorkerSession? {
        guard !workers.isEmpty else { return nil }
        var best: WorkerSession?
        for offset in 0..<workers.count {
            let worker = workers[(cursor + offset) % workers.count]
            guard worker.lostReason == nil, !excluded.contains(worker.id) else { continue }
            if best == nil || worker.outstanding.count < best!.outstanding.count { best = worker }
        }
        cursor = (cursor + 1) % workers.count
        return best
    }
}
