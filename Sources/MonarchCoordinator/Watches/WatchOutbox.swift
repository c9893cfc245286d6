import DequeModule
import MonarchWire

/// The `changed` events on their way to one client. An event goes out at once while the
/// client takes what it is sent; otherwise it waits in its watch's queue, at most `limit`
/// events per watch (``Configuration/Limits/watchEvents``). Past that, events of the watch are
/// dropped and counted, and the watch's next event out is one `overflow` naming how many were
/// lost — so a watcher that does not read costs a bounded amount and never delays anyone
/// else. Loop thread only.
struct WatchOutbox {
    /// Events queued per watch at most.
    let limit: Int
    private var queued: [MessageID: Deque<ChangedMessage>] = [:]
    private var dropped: [MessageID: Int] = [:]
    /// Watches with something waiting, in the order they started waiting (served in turns).
    private var waiting: Deque<MessageID> = []

    /// An outbox queueing at most `limit` events per watch.
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Events waiting, all watches together (overflows included).
    var count: Int { queued.values.reduce(0) { $0 + $1.count } + dropped.count }

    /// Whether nothing waits for the watch.
    func isClear(_ watch: MessageID) -> Bool { queued[watch] == nil && dropped[watch] == nil }

    /// Queues `event` for its watch, or drops it (counted for the watch's `overflow`) when the
    /// watch's queue is full or has overflowed already; returns whether it was queued.
    @discardableResult
    mutating func enqueue(_ event: ChangedMessage) -> Bool {
        let watch = event.watch
        if isClear(watch) { waiting.append(watch) }
        if dropped[watch] != nil || (queued[watch]?.count ?? 0) >= limit {
            dropped[watch, default: 0] += 1
            return false
        }
        queued[watch, default: []].append(event)
        return true
    }

    /// The next event to send, in turns between watches: a watch's queued events first, then
    /// its `overflow` when it lost some. Nil when nothing waits.
    mutating func next() -> ChangedMessage? {
        while let watch = waiting.first {
            if var events = queued[watch], let event = events.popFirst() {
                queued[watch] = events.isEmpty ? nil : events
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
        queued[watch] = nil
        dropped[watch] = nil
        waiting.removeAll { $0 == watch }
    }
}
