import MonarchConfig
import MonarchWire

extension Coordinator {
    /// What is wrong with `change` under `limits`, nil when nothing: its key, prefix or tag
    /// longer than `invalidateBytes` (as an invalidation's), more than `tagsPerEntry` tags,
    /// or a tag longer than `tagBytes`.
    nonisolated static func problem(with change: SharedChangeMessage, under limits: Configuration.Limits) -> String? {
        let bytes = change.target.text.utf8.count
        if bytes > limits.invalidateBytes {
            return "the sharedChange's target is \(bytes) bytes; the limit is \(limits.invalidateBytes) (limits.invalidateBytes)"
        }
        let tags = change.tags ?? []
        if tags.count > limits.tagsPerEntry {
            return "the sharedChange has \(tags.count) tags; the limit is \(limits.tagsPerEntry) (limits.tagsPerEntry)"
        }
        if let long = tags.first(where: { $0.utf8.count > limits.tagBytes }) {
            return "a tag of the sharedChange is \(long.utf8.count) bytes; the limit is \(limits.tagBytes) (limits.tagBytes)"
        }
        return nil
    }

    /// Tells this coordinator's watchers of a change another coordinator made to the shared
    /// store, as `worker` forwarded it: once per change id, however many cache workers
    /// forward it (``RecentChanges``), after the hot tier dropped what it covers, at each copy. A change past the limits ends the worker's connection
    /// with an `invalidField` error. Through the same per-watcher bounded queues as this
    /// coordinator's own changes.
    func noteSharedChange(_ change: SharedChangeMessage, from worker: WorkerSession) {
        if let problem = Self.problem(with: change, under: limits) {
            peerLog.log(.warning, "worker \(worker.id) forwarded an oversized change: \(problem)", to: logger)
            worker.connection.fail(ProtocolError(.invalidField, problem))
            return
        }
        // Every copy drops the hot tier's entries (each cache worker forwards a change once it
        // dropped its own copy from memory, so a read answered by it before then is refused).
        changeHotTier([change.target])
        guard recentSharedChanges.insert(change.change) else { return }
        sharedChangesHeard += 1
        switch change.event {
        case .stored:
            guard case .key(let key) = change.target else { return }
            notifyStored(key, tags: change.tags ?? [], refreshed: false)
        case .invalidated:
            // The other coordinator's workers did not list the keys a tag dropped.
            notifyInvalidated([change.target], removedKeys: nil)
        }
    }
}
