/// A least-recently-used set of entries bounded by a byte budget.
///
/// Each entry costs ``cost(key:entry:)``: its key, body and header bytes plus a fixed
/// ``entryOverhead`` standing for the bookkeeping around it, so that the process's memory
/// follows the budget. Inserting evicts least-recently-used entries until the total fits; an
/// entry costing more than the whole budget is not kept (and drops any older entry under its
/// key). `get`, `put` and `remove` are O(1) (a dictionary of slots in a doubly linked list
/// kept in an array); removal by prefix or by predicate is O(n).
///
/// Keys compare byte for byte (as the SQLite file compares them), not by canonical
/// equivalence. A value type with no locking: the owner serialises access.
public struct MemoryCache {
    /// The bytes the entries may cost together.
    public let budgetBytes: Int
    /// What the entries kept now cost together; never above ``budgetBytes``.
    public private(set) var usedBytes = 0
    /// How many entries were evicted to make room since the cache was created.
    public private(set) var evictions = 0

    /// The fixed cost counted for every entry beyond its bytes: the slot (in an array that
    /// grows by doubling), the dictionary entry, the heap blocks of the key, the body and the
    /// header dictionary, and the allocator's rounding. Measured with `monarch-cache-bench`:
    /// an entry of 1 KiB with one header costs the worker about 1.65 KB of resident memory.
    public static let entryOverhead = 480
    /// The fixed cost counted for every header beyond its bytes (its bucket and the heap
    /// blocks of its name and value).
    public static let headerOverhead = 96

    private struct Slot {
        var key: String
        var entry: CacheEntry?
        var cost: Int
        /// Towards the most recently used end; -1 at the head.
        var newer: Int
        /// Towards the least recently used end; -1 at the tail.
        var older: Int
    }

    private var slots: [Slot] = []
    private var freeSlots: [Int] = []
    private var slotOfKey: [CacheKey: Int] = [:]
    /// The most recently used slot, or -1.
    private var newest = -1
    /// The least recently used slot, or -1.
    private var oldest = -1

    /// An empty cache holding at most `budgetBytes` of entries (negative counts as zero).
    public init(budgetBytes: Int) {
        self.budgetBytes = max(0, budgetBytes)
    }

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
    public var count: Int { slotOfKey.count }

    /// The entry under `key`, which becomes the most recently used; nil when not kept.
    public mutating func get(_ key: String) -> CacheEntry? {
        guard let slot = slotOfKey[CacheKey(key)] else { return nil }
        moveToNewest(slot)
        return slots[slot].entry
    }

    /// The entry under `key`, leaving the order of use alone; nil when not kept.
    public func peek(_ key: String) -> CacheEntry? {
        slotOfKey[CacheKey(key)].flatMap { slots[$0].entry }
    }

    /// Keeps `entry` under `key` as the most recently used entry, replacing any older one,
    /// then evicts least-recently-used entries until the total fits the budget.
    ///
    /// - Returns: whether the entry is kept: false when it alone costs more than the budget
    ///   (any older entry under `key` is then dropped too).
    @discardableResult
    public mutating func put(_ key: String, _ entry: CacheEntry) -> Bool {
        let cost = Self.cost(key: key, entry: entry)
        remove(key)
        guard cost <= budgetBytes else { return false }
        while usedBytes + cost > budgetBytes, oldest >= 0 {
            remove(slots[oldest].key)
            evictions += 1
        }
        let slot: Int
        let fresh = Slot(key: key, entry: entry, cost: cost, newer: -1, older: newest)
        if let reused = freeSlots.popLast() {
            slot = reused
            slots[slot] = fresh
        } else {
            slot = slots.count
            slots.append(fresh)
        }
        if newest >= 0 { slots[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
        slotOfKey[CacheKey(key)] = slot
        usedBytes += cost
        return true
    }

    /// Drops the entry under `key` (keys compare byte for byte, as in the file).
    ///
    /// - Returns: the entry dropped, or nil when none was kept.
    @discardableResult
    public mutating func remove(_ key: String) -> CacheEntry? {
        guard let slot = slotOfKey.removeValue(forKey: CacheKey(key)) else { return nil }
        unlink(slot)
        let entry = slots[slot].entry
        usedBytes -= slots[slot].cost
        slots[slot] = Slot(key: "", entry: nil, cost: 0, newer: -1, older: -1)
        freeSlots.append(slot)
        return entry
    }

    /// Drops every entry tagged `tag` (tags compared as UTF-8 bytes). O(n).
    ///
    /// - Returns: the keys dropped.
    public mutating func removeAll(taggedWith tag: String) -> [String] {
        var keys: [String] = []
        for (key, slot) in slotOfKey where slots[slot].entry?.tags.contains(where: { $0.utf8.elementsEqual(tag.utf8) }) == true {
            keys.append(key.string)
        }
        for key in keys { remove(key) }
        return keys
    }

    /// Drops every entry whose key starts with the bytes of `prefix` (compared as UTF-8 bytes,
    /// as SQLite compares keys, not by canonical equivalence).
    ///
    /// - Returns: the keys dropped.
    public mutating func removeAll(withPrefix prefix: String) -> [String] {
        let keys = slotOfKey.keys.filter { $0.hasBytePrefix(prefix) }.map(\.string)
        for key in keys { remove(key) }
        return keys
    }

    /// Drops every entry for which `shouldRemove` is true.
    ///
    /// - Returns: how many entries were dropped.
    @discardableResult
    public mutating func removeAll(where shouldRemove: (String, CacheEntry) -> Bool) -> Int {
        let keys = slotOfKey.compactMap { key, slot in
            slots[slot].entry.map { shouldRemove(key.string, $0) } == true ? key.string : nil
        }
        for key in keys { remove(key) }
        return keys.count
    }

    /// The keys kept, most recently used first.
    public var keysByRecency: [String] {
        var keys: [String] = []
        keys.reserveCapacity(count)
        var slot = newest
        while slot >= 0 {
            keys.append(slots[slot].key)
            slot = slots[slot].older
        }
        return keys
    }

    private mutating func moveToNewest(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        slots[slot].older = newest
        slots[slot].newer = -1
        if newest >= 0 { slots[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }

    private mutating func unlink(_ slot: Int) {
        let (newer, older) = (slots[slot].newer, slots[slot].older)
        if newer >= 0 { slots[newer].older = older } else { newest = older }
        if older >= 0 { slots[older].newer = newer } else { oldest = newer }
        slots[slot].newer = -1
        slots[slot].older = -1
    }
}
