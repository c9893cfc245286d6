import Monarch
import MonarchConfig
import MonarchWire

// `scale`: local pools grow and shrink at runtime, one desired size at a time per pool.
extension Coordinator {
    /// How long a scale run may go without progress (a worker registering or exiting, a new
    /// size asked for) before it gives up.
    var scaleTimeout: Duration { max(limits.timeout, .seconds(30)) }

    /// Makes `message.count` local workers of `message.kind` run.
    ///
    /// The count replaces whatever an earlier scale of the pool asked for; one run per pool
    /// (``Supervisor/reconcile(_:for:)``) brings the pool to the latest count, starting workers
    /// a few at a time (``ScalePlan/startBound(workerStarts:handshakes:)``) and stopping
    /// leaving ones only once they have drained and the staying ones are registered. Answers,
    /// once the pool has got there, a `result` (``ScaleReport``; `superseded` with the
    /// `requested` count when a later scale replaced this one's), or a `failure`:
    /// `invalidRequest` when this coordinator starts no workers, the configuration has none of
    /// that kind or the count is above ``Configuration/Limits/workers``; `shuttingDown` while it
    /// drains; `unavailable` when the pool failed (its workers restarted too often), a worker
    /// could not be started, or the run made no progress within ``scaleTimeout``: what was
    /// started stays, and the size asked for stays wanted. The run goes on when the client that
    /// asked leaves.
    func scale(_ message: ScaleMessage) async -> WireMessage {
        func failure(_ code: ChainError.Code, _ text: String) -> WireMessage {
            .failure(FailureMessage(id: message.id, error: ChainError(code, text).detail))
        }
        guard message.count <= limits.workers else {
            return failure(
                .invalidRequest, "\(message.count) \(message.kind) workers asked for; at most \(limits.workers) workers connect (limits.workers)")
        }
        guard !draining else { return failure(.shuttingDown, "the coordinator is shutting down") }
        guard let supervisor else {
            return failure(
                .invalidRequest,
                "this coordinator starts no workers (it runs outside `monarch up`); start or stop \(message.kind) workers where they run")
        }
        return await supervisor.scale(message, for: self)
    }
}
