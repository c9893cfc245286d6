import DequeModule
import MonarchWire

/// The `changed` events on their way to one client. An event goes out at once while the
/// client takes what it is sent; otherwise it waits in its watch's queue, at most `limit`
/// events per watch (``Configuration/Limits/watchEvents``). Past that, events of the watch are
/// dropped and counted, and the watch's next event out is one `overflow` naming how many were
/// lost — so a watcher that does not read costs a bounded amount and never delays anyone
/// else. The outbox also keeps the size of what it queues (``bytes``), which the client's and
/// the coordinator's byte bounds are checked against. Loop thread only.
struct WatchOutbox {
    /// Events queued per watch at most.
    let limit: Int
    private var queued: [MessageID: Deque<ChangedMessage>] = [:]
    private var dropped: [MessageID: Int] = [:]
    /// Watches with something waiting, in the order they started waiting (served in turns).
    private var waiting: Deque<MessageID> = []
    /// The estimated frame size of the events queued, in bytes (``size(of:)``).
    private(set) var bytes = 0

    /// An outbox queueing at most `limit` events per watch.
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Events waiting, all watches together (overflows included).
    var count: Int { queued.values.reduce(0) { $0 + $1.count } + dropped.count }

    /// Whether nothing waits for any watch.
    var isEmpty: Bool { waiting.isEmpty }

    /// Whether nothing waits for the watch.
    func isClear(_ watch: MessageID) -> Bool { queued[watch] == nil && dropped[watch] == nil }

    /// The size `event` is counted at, in bytes: a bound on its frame (its strings, its tags
    /// and the frame's fixed part), worked out without encoding it.
    static func size(of event: ChangedMessage) -> Int {
        var size = 120
        size += event.key?.utf8.count ?? 0
        size += event.prefix?.utf8.count ?? 0
        size += event.tag?.utf8.count ?? 0
        for tag in event.tags ?? [] { size += tag.utf8.count + 3 }
        return size
    }

    /// Queues `event` for its watch, or drops it (counted for the watch's `overflow`) when the
    /// watch's queue is full or has overflowed already; returns whether it was queued.
    @discardableResult
    mutating func enqueue(_ event: ChangedMessage) -> Bool {
        let watch = event.watch
        if dropped[watch] != nil || (queued[watch]?.count ?? 0) >= limit {
            drop(watch)
            return false
        }
        if isClear(watch) { waiting.append(watch) }
        queued[watch, default: []].append(event)
        bytes += Self.size(of: event)
        return true
    }

    /// Counts one event of `watch` as lost: the watch's next event out is its `overflow`.
    mutating func drop(_ watch: MessageID) {
        if isClear(watch) { waiting.append(watch) }
        dropped[watch, default: 0] += 1
    }

    /// The next event to send, in turns between watches: a watch's queued events first, then
    /// its `overflow` when it lost some. Nil when nothing waits.
    mutating func next() -> ChangedMessage? {
        while let watch = waiting.first {
            if var events = queued[watch], let event = events.popFirst() {
                queued[watch] = events.isEmpty ? nil : events
                bytes -= Self.size(of: event)
                waiting.removeFirst()
                if !isClear(watch) { waiting.append(watch) }
                return event
            }
            waiting.removeFirst()
            if let lost = dropped.removeValue(forKey: watch) {
                return ChangedMessage(watch: watch, event: .overflow, dropped: lost)
            }
        }
        return nil
    }

    /// Forgets what waits for `watch` (it was unwatched).
    mutating func forget(_ watch: MessageID) {
        for event in queued.removeValue(forKey: watch) ?? [] { bytes -= Self.size(of: event) }
        dropped[watch] = nil
        waiting.removeAll { $0 == watch }
    }

    /// Forgets everything that waits, giving its storage back; returns how many events (not
    /// counting overflows) were waiting.
    @discardableResult
    mutating func removeAll() -> Int {
        let events = queued.values.reduce(0) { $0 + $1.count }
        queued = [:]
        dropped = [:]
        waiting = []
        bytes = 0
        return events
    }
}
