import Monarch
import MonarchWire

extension Coordinator {
    /// Drops the entries `message` names from every cache worker, paths resolved through the
    /// router first (``TargetResolution``), as requested for `host` (an HTTP request's `Host`,
    /// normalized, so that a route with a host is found; nil for the wire's): a `result` with `removed` (entries), `workers`
    /// (that answered) and `targets` (the keys, prefixes or tag the message resolved to), the
    /// hot tier's entries dropped before it answers (``HotTier/change(_:)``), or a
    /// `failure` when the target does not resolve (`noRoute`, `invalidPath`, `unknownDomain`,
    /// `requestTooLarge`), no cache worker is connected, or one of them did not answer
    /// (`invalidateIncomplete`: the others did drop theirs). A soft one (`soft: true`) has the
    /// workers mark the entries stale instead, and its `result` adds `markedStale`; the hot tier
    /// drops them all the same, and watchers hear `invalidated` as for any invalidation. Loop
    /// thread.
    func invalidate(_ message: InvalidateMessage, host: String? = nil) async -> WireMessage {
        let targets: [CacheTarget]
        do {
            targets = try targetResolution.resolve(message.target, host: host)
        } catch {
            return .failure(FailureMessage(id: message.id, error: error.detail))
        }
        // The hot tier drops the targets at once, and again once the workers answered: what
        // a read brought back meanwhile is not kept, and nothing it held is answered after this.
        changeHotTier(targets)
        defer { changeHotTier(targets) }
        var total = CachePool.InvalidationReport()
        for pool in cachePools {
            var answered = 0
            for target in targets {
                let report = await pool.invalidate(target, soft: message.soft)
                total.removed += report.removed
                total.markedStale += report.markedStale
                answered = max(answered, report.workers)
                total.failures += report.failures
                total.removedKeys += report.removedKeys
                total.keysComplete = total.keysComplete && report.keysComplete
            }
            total.workers += answered
        }
        let what = (message.soft ? "soft purge of " : "") + message.target.description
        let changed = total.removed + total.markedStale
        // Watchers hear of what was dropped (or made stale), also when some workers did not answer.
        if changed > 0 { notifyInvalidated(targets, removedKeys: total.keysComplete ? total.removedKeys : nil) }
        if total.workers == 0, total.failures.isEmpty {
            return .failure(FailureMessage(
                id: message.id, error: .init(code: .unavailable, message: "no cache worker is connected to invalidate \(what)")))
        }
        guard total.failures.isEmpty else {
            return .failure(FailureMessage(id: message.id, error: .init(
                code: .invalidateIncomplete,
                message: "\(what): removed \(total.removed) on \(total.workers) worker(s), but not on: "
                    + total.failures.joined(separator: "; "))))
        }
        let stale = message.soft ? ", \(total.markedStale) marked stale" : ""
        adminLog.log(
            .info,
            "invalidated \(what): \(total.removed) entr\(total.removed == 1 ? "y" : "ies") removed\(stale) on \(total.workers) worker(s)",
            to: logger)
        var data: [String: JSONValue] = [
            "removed": .integer(Int64(total.removed)), "workers": .integer(Int64(total.workers)),
            "targets": .array(targets.map { .string($0.text) }),
        ]
        if message.soft { data["markedStale"] = .integer(Int64(total.markedStale)) }
        return .result(ResultMessage(id: message.id, data: data))
    }
}
