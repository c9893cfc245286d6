import Monarch
import MonarchWire

extension Coordinator {
    /// Starts the watch `message` asks for on behalf of `client`: its target is resolved as an
    /// invalidation's is (``TargetResolution``), then registered. A `result` with `targets`
    /// (what the watch follows), or a `failure`: the resolution's (`noRoute`, `invalidPath`,
    /// `unknownDomain`, `requestTooLarge`), `overloaded` past
    /// ``Configuration/Limits/watchesPerClient``, `invalidRequest` for an id that already
    /// names an active watch of the client.
    func watch(_ message: WatchMessage, for client: Int) -> WireMessage {
        let resolved: [CacheTarget]
        do {
            resolved = try targetResolution.resolve(message.target)
        } catch {
            return .failure(FailureMessage(id: message.id, error: error.detail))
        }
        do throws(WatchRegistry.Refusal) {
            try watches.add(WatchRef(client: client, watch: message.id), on: resolved)
        } catch .tooMany(let limit) {
            return .failure(FailureMessage(id: message.id, error: ChainError(
                .overloaded, "this connection holds \(limit) watches (limits.watchesPerClient); unwatch one first").detail))
        } catch {
            return .failure(FailureMessage(id: message.id, error: ChainError(
                .invalidRequest, "watch \(message.id) is already active on this connection").detail))
        }
        return .result(ResultMessage(id: message.id, data: ["targets": .array(resolved.map { .string($0.text) })]))
    }

    /// Stops the watch `message` names: a `result` saying whether it was active.
    func unwatch(_ message: UnwatchMessage, for client: Int) -> WireMessage {
        let removed = watches.remove(WatchRef(client: client, watch: message.watch))
        clients[client]?.forgetWatch(message.watch)
        return .result(ResultMessage(id: message.id, data: ["removed": .bool(removed)]))
    }

    /// Tells the watchers of `key` (its key, a prefix of it, one of its `tags`) that an entry
    /// was stored there: `refreshed` when the trip had found an entry in the cache, else
    /// `stored`. The events go out over the next loop turns (``fanOut(_:to:)``).
    func notifyStored(_ key: String, tags: [String], refreshed: Bool) {
        let refs = watches.watches(storedUnder: key, tags: tags)
        guard !refs.isEmpty else { return }
        fanOut(
            ChangedMessage(watch: 0, event: refreshed ? .refreshed : .stored, key: key, tags: tags.isEmpty ? nil : tags),
            to: refs)
    }

    /// Tells the watchers each of `targets` concerns that it was invalidated. `removedKeys`:
    /// the keys the cache workers reported dropping, nil when they did not report them all
    /// (see ``WatchRegistry/watches(invalidating:removedKeys:)``); a key target under which
    /// nothing was dropped (a path's `HEAD` key, typically) tells nobody. The events go out
    /// over the next loop turns (``fanOut(_:to:)``).
    func notifyInvalidated(_ targets: [CacheTarget], removedKeys: [String]?) {
        let removed = removedKeys.map(Set.init)
        for target in targets {
            if case .key(let key) = target, let removed, !removed.contains(key) { continue }
            var event = ChangedMessage(watch: 0, event: .invalidated)
            switch target {
            case .key(let key): event.key = key
            case .prefix(let prefix): event.prefix = prefix
            case .tag(let tag): event.tag = tag
            case .path, .pathPrefix: continue
            }
            fanOut(event, to: watches.watches(invalidating: target, removedKeys: removedKeys))
        }
    }
}
