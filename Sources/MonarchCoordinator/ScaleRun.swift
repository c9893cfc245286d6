import Monarch
import MonarchWire

/// The callers of `scale` waiting while one pool moves to the size last asked for.
///
/// One run per pool at a time: a `scale` arriving while a run is under way replaces the
/// size wanted and joins the run; the run converges to the latest size, then answers every
/// caller at once — each with a report of where the pool ended (``ScaleReport/superseded``
/// when a later scale replaced what that caller asked for), or every one with the same
/// failure.
///
/// Not `Sendable`: a run belongs to its pool in the ``Supervisor`` (`Supervisor.Pool.run`),
/// and is reached only in the supervisor's isolation — by ``Supervisor/scale(_:for:)`` and the
/// run's ``Supervisor/reconcile(_:for:)`` — which the compiler checks. Nothing but its
/// callers' continuations, which are `Sendable`, leaves it.
final class ScaleRun {
    /// One waiting caller.
    struct Caller: Sendable {
        /// The id of its `scale` message.
        var id: MessageID
        /// The number of workers it asked for.
        var requested: Int
        /// The number wanted before its scale.
        var previous: Int
        /// The local workers registered and staying when it asked.
        var before: Set<String>
        /// Where its answer goes.
        var continuation: CheckedContinuation<WireMessage, Never>
    }

    /// How a run ends, for every caller at once.
    enum Ending: Sendable {
        /// The pool got there: `target` workers wanted, `final` the local workers staying (all
        /// registered), `remote` the workers that dialled in.
        case finished(target: Int, final: [(name: String, ordinal: Int)], remote: Int)
        /// The run gave up with the failure `code`, `message`.
        case failed(ChainError.Code, String)
    }

    /// The pool's kind.
    let kind: String
    private var callers: [Caller] = []

    /// A run for the pool of `kind`.
    init(kind: String) {
        self.kind = kind
    }

    /// Adds a caller, answered when the run ends.
    func join(_ caller: Caller) {
        callers.append(caller)
    }

    /// Answers every caller as `ending` says (see ``finish(target:final:remote:)``, ``fail(_:_:)``).
    func end(_ ending: Ending) {
        switch ending {
        case .finished(let target, let final, let remote): finish(target: target, final: final, remote: remote)
        case .failed(let code, let message): fail(code, message)
        }
    }

    /// Answers every caller with the report of where the pool ended: `target` workers wanted,
    /// `final` the local workers staying (all registered), `remote` the workers that dialled in.
    func finish(target: Int, final: [(name: String, ordinal: Int)], remote: Int) {
        for caller in takeCallers() {
            let report = Self.report(
                kind: kind, for: (caller.requested, caller.previous, caller.before), target: target, final: final, remote: remote)
            caller.continuation.resume(returning: .result(ResultMessage(id: caller.id, report: report)))
        }
    }

    /// Answers every caller with the failure `code`, `message`.
    func fail(_ code: ChainError.Code, _ message: String) {
        for caller in takeCallers() {
            caller.continuation.resume(returning: .failure(FailureMessage(id: caller.id, error: ChainError(code, message).detail)))
        }
    }

    private func takeCallers() -> [Caller] {
        defer { callers.removeAll() }
        return callers
    }

    /// The report for a caller that asked for `requested` workers when `previous` were wanted
    /// and `before` were registered and staying, once the pool holds `final` of `target`:
    /// started are the final workers not there before (lowest first), stopped the ones there
    /// before and gone (highest first, the order they were chosen in).
    static func report(
        kind: String, for caller: (requested: Int, previous: Int, before: Set<String>), target: Int,
        final: [(name: String, ordinal: Int)], remote: Int
    ) -> ScaleReport {
        let finalNames = Set(final.map(\.name))
        let started = final.sorted { $0.ordinal < $1.ordinal }.map(\.name).filter { !caller.before.contains($0) }
        let stopped = caller.before.filter { !finalNames.contains($0) }
            .sorted { (ordinal(of: $0) ?? 0, $0) > (ordinal(of: $1) ?? 0, $1) }
        var report = ScaleReport(
            kind: kind, count: target, previous: caller.previous, started: started, stopped: stopped, remote: remote)
        if caller.requested != target {
            report.requested = caller.requested
            report.superseded = true
        }
        return report
    }

    /// The ordinal at the end of a local worker's name (`bundle-12` → 12).
    private static func ordinal(of name: String) -> Int? {
        name.split(separator: "-").last.flatMap { Int($0) }
    }
}
