import Monarch

/// A least-recently-used set of entries bounded by a byte budget (a ``Monarch/ByteBudgetLRU``).
///
/// Each entry costs ``cost(key:entry:)``: its key, body and header bytes plus a fixed
/// ``entryOverhead`` standing for the bookkeeping around it, so that the process's memory
/// follows the budget. Inserting evicts least-recently-used entries until the total fits; an
/// entry costing more than the whole budget is not kept (and drops any older entry under its
/// key). `get`, `put` and `remove` are O(1); removal by prefix, tag or predicate is O(n).
///
/// Keys compare byte for byte (as the SQLite file compares them), not by canonical
/// equivalence. A value type with no locking: the owner serialises access.
public struct MemoryCache {
    /// The fixed cost counted for every entry beyond its bytes: the slot (in an array that
    /// grows by doubling), the dictionary entry, the heap blocks of the key, the body and the
    /// header dictionary, and the allocator's rounding. Measured with `monarch-cache-bench`:
    /// an entry of 1 KiB with one header costs the worker about 1.65 KB of resident memory.
    public static let entryOverhead = 480
    /// The fixed cost counted for every header beyond its bytes (its bucket and the heap
    /// blocks of its name and value).
    public static let headerOverhead = 96

    /// The entries, in order of use.
    private var entries: ByteBudgetLRU<CacheEntry>

    /// An empty cache holding at most `budgetBytes` of entries (negative counts as zero).
    public init(budgetBytes: Int) {
        entries = ByteBudgetLRU(budgetBytes: budgetBytes)
    }

    /// The bytes the entries may cost together.
    public var budgetBytes: Int { entries.budgetBytes }
    /// What the entries kept now cost together; never above ``budgetBytes``.
    public var usedBytes: Int { entries.usedBytes }
    /// How many entries were evicted to make room since the cache was created.
    public var evictions: Int { entries.evictions }

    /// What keeping `entry` under `key` costs against the budget.
    public static func cost(key: String, entry: CacheEntry) -> Int {
        var cost = entryOverhead + key.utf8.count + entry.body.count
        for (name, value) in entry.headers {
            cost += headerOverhead + name.utf8.count + value.utf8.count
        }
        for tag in entry.tags {
            cost += headerOverhead + tag.utf8.count
        }
        return cost
    }

    /// How many entries are kept.
    public var count: Int { entries.count }

    /// The entry under `key`, which becomes the most recently used; nil when not kept.
    public mutating func get(_ key: String) -> CacheEntry? { entries.get(key) }

    /// The entry under `key`, leaving the order of use alone; nil when not kept.
    public func peek(_ key: String) -> CacheEntry? { entries.peek(key) }

    /// Keeps `entry` under `key` as the most recently used entry, replacing any older one,
    /// then evicts least-recently-used entries until the total fits the budget.
    ///
    /// - Returns: whether the entry is kept: false when it alone costs more than the budget
    ///   (any older entry under `key` is then dropped too).
    @discardableResult
    public mutating func put(_ key: String, _ entry: CacheEntry) -> Bool {
        entries.put(key, entry, cost: Self.cost(key: key, entry: entry))
    }

    /// Drops the entry under `key` (keys compare byte for byte, as in the file).
    ///
    /// - Returns: the entry dropped, or nil when none was kept.
    @discardableResult
    public mutating func remove(_ key: String) -> CacheEntry? { entries.remove(key) }

    /// Drops every entry tagged `tag` (tags compared as UTF-8 bytes). O(n).
    ///
    /// - Returns: the keys dropped.
    public mutating func removeAll(taggedWith tag: String) -> [String] {
        entries.removeAll { _, entry in entry.tags.contains { $0.utf8.elementsEqual(tag.utf8) } }
    }

    /// Drops every entry whose key starts with the bytes of `prefix` (compared as UTF-8 bytes,
    /// as SQLite compares keys, not by canonical equivalence).
    ///
    /// - Returns: the keys dropped.
    public mutating func removeAll(withPrefix prefix: String) -> [String] {
        entries.removeAll(withPrefix: prefix)
    }

    /// Drops every entry for which `shouldRemove` is true.
    ///
    /// - Returns: how many entries were dropped.
    @discardableResult
    public mutating func removeAll(where shouldRemove: (String, CacheEntry) -> Bool) -> Int {
        entries.removeAll(where: shouldRemove).count
    }

    /// Makes the entry under `key` stale at `nowMs` (``CacheEntry/madeStale(at:)``), in place:
    /// its cost and its place in the order of use stay.
    ///
    /// - Returns: whether it changed: false when no entry is kept or it is stale already.
    @discardableResult
    public mutating func markStale(_ key: String, at nowMs: Int64) -> Bool {
        entries.replace(key) { $0.madeStale(at: nowMs) }
    }

    /// Makes stale at `nowMs`, in place, every entry fresh then for which `matches` is true. O(n).
    ///
    /// - Returns: the keys of the entries that changed.
    public mutating func markStaleAll(at nowMs: Int64, where matches: (String, CacheEntry) -> Bool) -> [String] {
        entries.replaceAll { key, entry in matches(key, entry) ? entry.madeStale(at: nowMs) : nil }
    }

    /// Makes stale at `nowMs` every fresh entry whose key starts with the bytes of `prefix`.
    ///
    /// - Returns: the keys of the entries that changed.
    public mutating func markStaleAll(withPrefix prefix: String, at nowMs: Int64) -> [String] {
        markStaleAll(at: nowMs) { key, _ in key.utf8.starts(with: prefix.utf8) }
    }

    /// Makes stale at `nowMs` every fresh entry tagged `tag` (tags compared as UTF-8 bytes).
    ///
    /// - Returns: the keys of the entries that changed.
    public mutating func markStaleAll(taggedWith tag: String, at nowMs: Int64) -> [String] {
        markStaleAll(at: nowMs) { _, entry in entry.tags.contains { $0.utf8.elementsEqual(tag.utf8) } }
    }

    /// The keys kept, most recently used first.
    public var keysByRecency: [String] { entries.keysByRecency }
}
