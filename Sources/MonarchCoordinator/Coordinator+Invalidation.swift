import Monarch
import MonarchWire

extension Coordinator {
    /// The pools whose workers keep responses.
    var cachePools: [CachePool] { pools.keys.sorted().compactMap { pools[$0] as? CachePool } }

    /// Drops the entries `message` names from every cache worker: a `result` with `removed`
    /// (entries) and `workers` (that answered), or a `failure` when no cache worker is
    /// connected or one of them did not answer (`invalidateIncomplete`: the others did drop
    /// theirs). Loop thread.
    func invalidate(_ message: InvalidateMessage) async -> WireMessage {
        loop.preconditionInEventLoop()
        let named = switch message.target {
        case .key(let key): key
        case .prefix(let prefix): prefix
        }
        guard named.utf8.count <= limits.invalidateBytes else {
            return .failure(FailureMessage(id: message.id, error: ChainError(
                .requestTooLarge,
                "the key or prefix is \(named.utf8.count) bytes; the limit is \(limits.invalidateBytes) (limits.invalidateBytes)"
            ).detail))
        }
        var total = CachePool.InvalidationReport()
        for pool in cachePools {
            let report = await pool.invalidate(message.target)
            total.removed += report.removed
            total.workers += report.workers
            total.failures += report.failures
        }
        let what = switch message.target {
        case .key(let key): "key \(LogText.quoted(key))"
        case .prefix(let prefix): "prefix \(LogText.quoted(prefix))"
        }
        if total.workers == 0, total.failures.isEmpty {
            return .failure(FailureMessage(
                id: message.id, error: .init(code: "unavailable", message: "no cache worker is connected to invalidate \(what)")))
        }
        guard total.failures.isEmpty else {
            return .failure(FailureMessage(id: message.id, error: .init(
                code: "invalidateIncomplete",
                message: "\(what): removed \(total.removed) on \(total.workers) worker(s), but not on: "
                    + total.failures.joined(separator: "; "))))
        }
        adminLog.log(
            .info, "invalidated \(what): \(total.removed) entr\(total.removed == 1 ? "y" : "ies") on \(total.workers) worker(s)",
            to: logger)
        return .result(ResultMessage(id: message.id, data: [
            "removed": .integer(Int64(total.removed)), "workers": .integer(Int64(total.workers)),
        ]))
    }
}
