import Monarch
import MonarchRouter
import Synchronization

/// The parsed, encoded and routed form of request paths seen lately, so a path asked for again
/// and again (a hot resource) is parsed and routed once. A path is kept per host it was routed
/// for (``Router/routedHost(_:)``: nil for a request naming none, or a host no route names), so
/// two sites' routes never mix. Bounded: at most ``capacity`` paths (`limits.routeCache`) of at
/// most ``longestPath`` bytes, the host's counted; when full, a new path takes the place of one
/// not asked for again lately (second chance), so the hot paths stay. Safe from any thread.
final class RouteCache: Sendable {
    /// What a path came to. A reference, so that a request takes it from the cache without
    /// copying its parts.
    final class Entry: Sendable {
        /// The path, parsed.
        let path: ResourcePath
        /// `path.encoded`.
        let encoded: String
        /// The route it matched, if any.
        let match: RouteMatch<RouteOptions>?
        /// What a plain read of the path comes to (see ``PlainRead``); nil when it matched no
        /// route or its upstream could not be built.
        let plainRead: PlainRead?

        init(path: ResourcePath, encoded: String, match: RouteMatch<RouteOptions>?, plainRead: PlainRead? = nil) {
            self.path = path
            self.encoded = encoded
            self.match = match
            self.plainRead = plainRead
        }
    }

    /// What a plain read of a path — a `GET` naming no domain and no query items besides the
    /// path's own — comes to, so a path read again and again is not worked out each time.
    struct PlainRead: Sendable {
        /// The route's domain.
        var domain: RequestDomain
        /// The upstream URL, when the route has an upstream.
        var upstream: String?
        /// The cache key.
        var cacheKey: String
        /// The key it shares a trip under when it brings no headers, policy, TTL or body of its
        /// own (see ``RequestPlan/sharedKey``).
        var sharedKey: String
    }

    /// What an entry is kept under: the path's text and the host it was routed for.
    private struct Key: Hashable {
        var host: String?
        var path: String
    }

    /// A kept path, and whether it was asked for again since the hand last passed it.
    private struct Slot {
        var key: Key
        var entry: Entry
        var askedAgain: Bool
    }

    /// The kept paths in a ring, the hand that picks which goes next, and where each path lies.
    private struct Table {
        var slots: [Slot] = []
        var hand = 0
        var index: [Key: Int] = [:]

        /// The entry kept for `key`, marked as asked for again.
        mutating func lookUp(_ key: Key) -> Entry? {
            guard let at = index[key] else { return nil }
            slots[at].askedAgain = true
            return slots[at].entry
        }

        /// Keeps `entry` for `key`; when `capacity` paths are kept, it takes the place of the
        /// first the hand finds not asked for again since it last passed (each passed one loses
        /// its mark), so paths asked for again and again stay while one-off paths come and go.
        mutating func keep(_ entry: Entry, for key: Key, capacity: Int) {
            if let at = index[key] {
                slots[at].entry = entry
                return
            }
            guard slots.count >= capacity else {
                index[key] = slots.count
                slots.append(Slot(key: key, entry: entry, askedAgain: false))
                return
            }
            while slots[hand].askedAgain {
                slots[hand].askedAgain = false
                hand = (hand + 1) % slots.count
            }
            index[slots[hand].key] = nil
            index[key] = hand
            slots[hand] = Slot(key: key, entry: entry, askedAgain: false)
            hand = (hand + 1) % slots.count
        }
    }

    /// Paths kept at most.
    let capacity: Int
    /// The longest path kept, in bytes (with its host's).
    let longestPath: Int
    private let table = Mutex(Table())

    init(capacity: Int = 4096, longestPath: Int = 512) {
        self.capacity = capacity
        self.longestPath = longestPath
    }

    /// Paths kept now.
    var count: Int { table.withLock { $0.slots.count } }

    /// What `text` routed for `host` comes to, from the cache or by `parse` (whose errors are
    /// thrown, and not kept).
    func entry(for text: String, host: String? = nil, parse: (String) throws(ChainError) -> Entry) throws(ChainError) -> Entry {
        let key = Key(host: host, path: text)
        if let entry = table.withLock({ $0.lookUp(key) }) { return entry }
        // Parsed outside the lock: a path parsed twice at once is kept once, either way alike.
        let entry = try parse(text)
        guard capacity > 0, text.utf8.count + (host?.utf8.count ?? 0) <= longestPath else { return entry }
        table.withLock { $0.keep(entry, for: key, capacity: capacity) }
        return entry
    }
}
