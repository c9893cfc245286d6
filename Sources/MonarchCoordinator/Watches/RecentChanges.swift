import DequeModule

/// The ids of the last `capacity` shared-store changes the coordinator's watchers were told
/// of. Every cache worker sharing the store hears each change and forwards it, within
/// milliseconds of the others; the first copy is new here, the later ones are remembered and
/// dropped. Bounded: past `capacity` the oldest id is forgotten
/// (``Configuration/Limits/sharedChanges``). Loop thread only.
struct RecentChanges {
    /// How many ids are remembered at most.
    let capacity: Int
    private var order: Deque<String> = []
    private var known: Set<String> = []

    /// Remembers up to `capacity` ids.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Ids remembered now.
    var count: Int { order.count }

    /// Remembers `id`; returns whether it was new (not among the ids remembered).
    mutating func insert(_ id: String) -> Bool {
        guard known.insert(id).inserted else { return false }
        order.append(id)
        if order.count > capacity, let oldest = order.popFirst() { known.remove(oldest) }
        return true
    }
}
