import Monarch
import MonarchLoop

/// The workers of one kind, as one provider of the chain: each request goes to the worker
/// with the fewest requests in flight. A worker lost mid-request costs only that attempt: the
/// request moves to another worker of the pool, and only when none is left does the pool
/// report a failure (and the chain moves on). Loop thread only.
final class WorkerPool: RequestProvider, @unchecked Sendable {
    /// The workers' kind, which is also the provider's name.
    let kind: String
    let loop: EventLoop
    /// The registered workers, in registration order.
    private(set) var workers: [WorkerSession] = []
    /// Where the search for the least loaded worker starts, so ties rotate.
    private var cursor = 0

    init(kind: String, loop: EventLoop) {
        self.kind = kind
        self.loop = loop
    }

    var name: String { kind }

    /// Adds a registered worker; it leaves the pool when its connection ends.
    func add(_ worker: WorkerSession) {
        workers.append(worker)
    }

    /// Removes a worker whose connection ended.
    func remove(_ worker: WorkerSession) {
        workers.removeAll { $0 === worker }
    }

    /// When the trip down the chain must be over: set for the trip's task, so that each
    /// worker is handed the budget that is left (protocol section 5), not the whole of it.
    @TaskLocal static var tripEnd: ContinuousClock.Instant?

    func perform(_ request: Request) async -> ProviderOutcome {
        loop.preconditionInEventLoop()
        let end = Self.tripEnd ?? request.deadline.map { ContinuousClock.now + $0 }
        var request = request
        var lost: [String] = []
        while true {
            if Task.isCancelled { return .failure(.cancelled) }
            guard let worker = leastLoaded(excluding: lost) else {
                if lost.isEmpty {
                    return .failure(ProviderFailure(code: "unavailable", message: "no \(kind) worker is connected"))
                }
                return .failure(ProviderFailure(
                    code: "workerLost", message: "every \(kind) worker tried was lost mid-request (\(lost.joined(separator: ", ")))"))
            }
            if let end { request.deadline = max(.zero, end - ContinuousClock.now) }
            switch await worker.forward(request) {
            case .answered(let outcome): return outcome
            case .lost: lost.append(worker.id)
            }
        }
    }

    /// The connected worker with the fewest requests in flight, not among `excluded`.
    private func leastLoaded(excluding excluded: [String]) -> WorkerSession? {
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
