/// A least-recently-used set of values under string keys, bounded by a byte budget.
///
/// Each value costs what its owner says when it is put (its bytes and the bookkeeping around
/// them). Inserting evicts least-recently-used values until the total fits; a value costing
/// more than the whole budget is not kept (and drops any older value under its key). `get`,
/// `put` and `remove` are O(1) (a dictionary of slots in a doubly linked list kept in an
/// array); removal by prefix or by predicate is O(n).
///
/// Keys compare byte for byte (``ByteExactKey``), not by canonical equivalence. A value type
/// with no locking: the owner serialises access. The cache worker's memory and the
/// coordinator's hot tier are both one.
public struct ByteBudgetLRU<Value> {
    /// The bytes the values may cost together.
    public let budgetBytes: Int
    /// What the values kept now cost together; never above ``budgetBytes``.
    @inlinable public var usedBytes: Int { used }
    /// How many values were evicted to make room since the set was created.
    @inlinable public var evictions: Int { evicted }

    // Inlinable, so that callers in other modules get the set specialised for their values
    // (no generic metadata nor whole-slot copies on each use).
    @usableFromInline var used = 0
    @usableFromInline var evicted = 0

    @usableFromInline struct Slot {
        @usableFromInline var key: String
        @usableFromInline var value: Value?
        @usableFromInline var cost: Int
        /// Towards the most recently used end; -1 at the head.
        @usableFromInline var newer: Int
        /// Towards the least recently used end; -1 at the tail.
        @usableFromInline var older: Int

        @inlinable init(key: String, value: Value?, cost: Int, newer: Int, older: Int) {
            (self.key, self.value, self.cost, self.newer, self.older) = (key, value, cost, newer, older)
        }
    }

    @usableFromInline var slots: [Slot] = []
    @usableFromInline var freeSlots: [Int] = []
    @usableFromInline var slotOfKey: [ByteExactKey: Int] = [:]
    /// The most recently used slot, or -1.
    @usableFromInline var newest = -1
    /// The least recently used slot, or -1.
    @usableFromInline var oldest = -1

    /// An empty set holding at most `budgetBytes` of values (negative counts as zero).
    @inlinable public init(budgetBytes: Int) {
        self.budgetBytes = max(0, budgetBytes)
    }

    /// How many values are kept.
    @inlinable public var count: Int { slotOfKey.count }

    /// The value under `key`, which becomes the most recently used; nil when not kept.
    @inlinable public mutating func get(_ key: String) -> Value? {
        guard let slot = slotOfKey[ByteExactKey(key)] else { return nil }
        moveToNewest(slot)
        return slots[slot].value
    }

    /// The value under `key`, leaving the order of use alone; nil when not kept.
    @inlinable public func peek(_ key: String) -> Value? {
        slotOfKey[ByteExactKey(key)].flatMap { slots[$0].value }
    }

    /// Keeps `value` under `key` as the most recently used value, costing `cost` bytes,
    /// replacing any older one, then evicts least-recently-used values until the total fits
    /// the budget.
    ///
    /// - Returns: whether the value is kept: false when it alone costs more than the budget
    ///   (any older value under `key` is then dropped too).
    @inlinable @discardableResult
    public mutating func put(_ key: String, _ value: Value, cost: Int) -> Bool {
        remove(key)
        guard cost <= budgetBytes else { return false }
        while used + cost > budgetBytes, oldest >= 0 {
            remove(slots[oldest].key)
            evicted += 1
        }
        let slot: Int
        let fresh = Slot(key: key, value: value, cost: cost, newer: -1, older: newest)
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
        slotOfKey[ByteExactKey(key)] = slot
        used += cost
        return true
    }

    /// Drops the value under `key`.
    ///
    /// - Returns: the value dropped, or nil when none was kept.
    @inlinable @discardableResult
    public mutating func remove(_ key: String) -> Value? {
        guard let slot = slotOfKey.removeValue(forKey: ByteExactKey(key)) else { return nil }
        unlink(slot)
        let value = slots[slot].value
        used -= slots[slot].cost
        slots[slot] = Slot(key: "", value: nil, cost: 0, newer: -1, older: -1)
        freeSlots.append(slot)
        return value
    }

    /// Drops every value whose key starts with the bytes of `prefix` (compared as UTF-8 bytes,
    /// as SQLite compares keys, not by canonical equivalence).
    ///
    /// - Returns: the keys dropped.
    @inlinable @discardableResult
    public mutating func removeAll(withPrefix prefix: String) -> [String] {
        let keys = slotOfKey.keys.filter { $0.hasBytePrefix(prefix) }.map(\.string)
        for key in keys { remove(key) }
        return keys
    }

    /// Drops every value for which `shouldRemove` is true.
    ///
    /// - Returns: the keys dropped.
    @inlinable @discardableResult
    public mutating func removeAll(where shouldRemove: (String, Value) -> Bool) -> [String] {
        let keys = slotOfKey.compactMap { key, slot in
            slots[slot].value.map { shouldRemove(key.string, $0) } == true ? key.string : nil
        }
        for key in keys { remove(key) }
        return keys
    }

    /// Replaces the value under `key` by what `transform` makes of it, in place: its cost and
    /// its place in the order of use stay (the caller vouches that the new value costs what the
    /// old one did). Nothing changes when no value is kept or `transform` gives nil.
    ///
    /// - Returns: whether the value was replaced.
    @inlinable @discardableResult
    public mutating func replace(_ key: String, with transform: (Value) -> Value?) -> Bool {
        guard let slot = slotOfKey[ByteExactKey(key)], let value = slots[slot].value, let new = transform(value) else {
            return false
        }
        slots[slot].value = new
        return true
    }

    /// Replaces in place, as ``replace(_:with:)`` does, every value `transform` makes a new
    /// one of (it gets the key and the value). O(n).
    ///
    /// - Returns: the keys whose values were replaced.
    @inlinable @discardableResult
    public mutating func replaceAll(with transform: (String, Value) -> Value?) -> [String] {
        var replaced: [String] = []
        for (key, slot) in slotOfKey {
            guard let value = slots[slot].value, let new = transform(key.string, value) else { continue }
            slots[slot].value = new
            replaced.append(key.string)
        }
        return replaced
    }

    /// The keys kept, most recently used first.
    @inlinable public var keysByRecency: [String] {
        var keys: [String] = []
        keys.reserveCapacity(count)
        var slot = newest
        while slot >= 0 {
            keys.append(slots[slot].key)
            slot = slots[slot].older
        }
        return keys
    }

    @inlinable mutating func moveToNewest(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        slots[slot].older = newest
        slots[slot].newer = -1
        if newest >= 0 { slots[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }

    @inlinable mutating func unlink(_ slot: Int) {
        let (newer, older) = (slots[slot].newer, slots[slot].older)
        if newer >= 0 { slots[newer].older = older } else { newest = older }
        if older >= 0 { slots[older].newer = newer } else { oldest = newer }
        slots[slot].newer = -1
        slots[slot].older = -1
    }
}

extension ByteBudgetLRU: Sendable where Value: Sendable {}
extension ByteBudgetLRU.Slot: Sendable where Value: Sendable {}
