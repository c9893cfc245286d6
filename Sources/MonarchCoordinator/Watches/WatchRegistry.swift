import MonarchWire

/// One watch: the client that holds it and the id of its `watch` message.
struct WatchRef: Hashable, Sendable {
    var client: Int
    var watch: MessageID
}

/// Every client's watches, each a set of resolved targets (keys, key prefixes, tags), and which
/// of them a change concerns. Keys and tags are indexed; prefixes are scanned (at most
/// `limits.clients × limits.watchesPerClient` watches exist). Bounded by
/// ``Configuration/Limits/watchesPerClient`` per client. Loop thread only.
struct WatchRegistry {
    /// Why a watch was not added.
    enum Refusal: Error, Equatable {
        /// The client holds `limit` watches already.
        case tooMany(limit: Int)
        /// The client has a watch with this id already.
        case idInUse
    }

    /// How many watches one client may hold.
    let perClient: Int
    private var targets: [WatchRef: [CacheTarget]] = [:]
    private var byKey: [String: Set<WatchRef>] = [:]
    private var byTag: [String: Set<WatchRef>] = [:]
    private var byPrefix: [String: Set<WatchRef>] = [:]
    /// Each client's watches, by the ids of their `watch` messages.
    private var byClient: [Int: Set<MessageID>] = [:]

    /// A registry allowing `perClient` watches to each client.
    init(perClient: Int) {
        self.perClient = perClient
    }

    /// Watches held now, all clients together.
    var count: Int { targets.count }

    /// Watches `client` holds now.
    func count(of client: Int) -> Int { byClient[client]?.count ?? 0 }

    /// Whether the watch `ref` is held now.
    func contains(_ ref: WatchRef) -> Bool { targets[ref] != nil }

    /// Adds the watch `ref` on `resolved` (keys, key prefixes and tags).
    mutating func add(_ ref: WatchRef, on resolved: [CacheTarget]) throws(Refusal) {
        guard targets[ref] == nil else { throw .idInUse }
        guard count(of: ref.client) < perClient else { throw .tooMany(limit: perClient) }
        targets[ref] = resolved
        byClient[ref.client, default: []].insert(ref.watch)
        for target in resolved {
            switch target {
            case .key(let key): byKey[key, default: []].insert(ref)
            case .tag(let tag): byTag[tag, default: []].insert(ref)
            case .prefix(let prefix): byPrefix[prefix, default: []].insert(ref)
            case .path, .pathPrefix: break
            }
        }
    }

    /// Removes the watch `ref`; returns whether it was there.
    @discardableResult
    mutating func remove(_ ref: WatchRef) -> Bool {
        guard let resolved = targets.removeValue(forKey: ref) else { return false }
        byClient[ref.client]?.remove(ref.watch)
        if byClient[ref.client]?.isEmpty == true { byClient[ref.client] = nil }
        for target in resolved {
            switch target {
            case .key(let key): Self.drop(ref, under: key, from: &byKey)
            case .tag(let tag): Self.drop(ref, under: tag, from: &byTag)
            case .prefix(let prefix): Self.drop(ref, under: prefix, from: &byPrefix)
            case .path, .pathPrefix: break
            }
        }
        return true
    }

    /// Removes every watch of `client`: work in proportion to its own watches, not to
    /// everyone's. Once no watch is left, the tables give their storage back.
    mutating func removeAll(of client: Int) {
        guard let held = byClient[client] else { return }
        for watch in held { remove(WatchRef(client: client, watch: watch)) }
        if targets.isEmpty { self = WatchRegistry(perClient: perClient) }
    }

    private static func drop(_ ref: WatchRef, under name: String, from index: inout [String: Set<WatchRef>]) {
        index[name]?.remove(ref)
        if index[name]?.isEmpty == true { index[name] = nil }
    }

    /// The watches an entry stored under `key` with `tags` concerns: a watch of the key, of a
    /// prefix of it, or of one of its tags.
    func watches(storedUnder key: String, tags: [String]) -> Set<WatchRef> {
        var found = byKey[key] ?? []
        for tag in tags { found.formUnion(byTag[tag] ?? []) }
        for (prefix, refs) in byPrefix where key.utf8.starts(with: prefix.utf8) { found.formUnion(refs) }
        return found
    }

    /// The watches an invalidation of `target` (a key, prefix or tag) concerns.
    ///
    /// - A key: watches of the key or of a prefix of it.
    /// - A prefix: watches of a key starting with it, and of a prefix that overlaps it (one
    ///   starts with the other).
    /// - A tag: watches of the tag, and — from the keys the cache workers reported dropping
    ///   (`removedKeys`) — of those keys and their prefixes; when the workers did not report
    ///   every key (nil), every key and prefix watch, since any of them may be concerned.
    func watches(invalidating target: CacheTarget, removedKeys: [String]?) -> Set<WatchRef> {
        switch target {
        case .key(let key):
            return watches(storedUnder: key, tags: [])
        case .prefix(let prefix):
            var found: Set<WatchRef> = []
            for (key, refs) in byKey where key.utf8.starts(with: prefix.utf8) { found.formUnion(refs) }
            for (watched, refs) in byPrefix
            where watched.utf8.starts(with: prefix.utf8) || prefix.utf8.starts(with: watched.utf8) {
                found.formUnion(refs)
            }
            return found
        case .tag(let tag):
            var found = byTag[tag] ?? []
            if let removedKeys {
                for key in removedKeys { found.formUnion(watches(storedUnder: key, tags: [])) }
            } else {
                for refs in byKey.values { found.formUnion(refs) }
                for refs in byPrefix.values { found.formUnion(refs) }
            }
            return found
        case .path, .pathPrefix:
            return []
        }
    }
}
