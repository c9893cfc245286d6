import DequeModule
import MonarchWire

/// The `changed` events on their way from the coordinator to its watchers, and what they cost.
///
/// A change concerns any number of watches (a watch of the prefix `""` is concerned by every
/// change), so it is not told to all of them at once: it waits here, its watches grouped by
/// client, and the coordinator hands out a bounded number of deliveries per loop turn
/// (``Coordinator/watchWorkPerTurn``), so that other clients' answers go out in between. The
/// clients whose queued events can go out now wait here too, served in turns.
///
/// Every byte of events is counted once, at the size ``WatchOutbox/size(of:)`` gives: the
/// deliveries waiting here (``pendingBytes``) and what the clients hold (``queuedBytes``, the
/// sum of what each reports). Together they stay within
/// ``Configuration/Limits/watchQueueTotalBytes``. Loop thread only.
struct WatchFanout {
    /// One change to tell: the event each watch concerned gets (with its own `watch` id), and
    /// the size it is counted at.
    struct Change {
        /// The event, its `watch` id left to fill in.
        var event: ChangedMessage
        /// ``WatchOutbox/size(of:)`` of the event.
        var size: Int

        /// The change `event` makes.
        init(_ event: ChangedMessage) {
            self.event = event
            self.size = WatchOutbox.size(of: event)
        }
    }

    /// The watches of one client a change concerns.
    struct Group {
        /// The client's number.
        var client: Int
        /// The ids of its watches concerned.
        var watches: [MessageID]
    }

    private struct Batch {
        let change: Change
        let groups: [Group]
        var next = 0
    }

    private var batches: Deque<Batch> = []
    /// Bytes counted for deliveries not handed out yet: each change's size once per watch.
    private(set) var pendingBytes = 0
    /// Bytes of events the clients hold (queued, or written and not taken), as they report it.
    var queuedBytes = 0
    /// Watcher connections closed for falling too far behind.
    var watchersClosed = 0
    /// Whether a turn of fan-out work is scheduled on the loop.
    var scheduled = false
    private var ready: Deque<Int> = []
    private var readySet: Set<Int> = []

    /// An empty fan-out.
    init() {}

    /// Bytes of events counted against the total now: waiting here and held by the clients.
    var totalBytes: Int { pendingBytes + queuedBytes }

    /// Whether no delivery waits and no client is ready.
    var isIdle: Bool { batches.isEmpty && ready.isEmpty }

    /// `refs` grouped by client, each client's watches together.
    static func groups(_ refs: some Sequence<WatchRef>) -> [Group] {
        var byClient: [Int: [MessageID]] = [:]
        for ref in refs { byClient[ref.client, default: []].append(ref.watch) }
        return byClient.map { Group(client: $0.key, watches: $0.value) }
    }

    /// Queues `change` for the watches in `groups`, counting its size once per watch.
    mutating func add(_ change: Change, to groups: [Group]) {
        guard !groups.isEmpty else { return }
        pendingBytes += change.size * groups.reduce(0) { $0 + $1.watches.count }
        batches.append(Batch(change: change, groups: groups))
    }

    /// The next client's share of the oldest change waiting, no longer counted here; nil when
    /// nothing waits.
    mutating func nextDelivery() -> (change: Change, group: Group)? {
        guard var batch = batches.first else { return nil }
        let group = batch.groups[batch.next]
        batch.next += 1
        if batch.next == batch.groups.count { batches.removeFirst() } else { batches[0] = batch }
        pendingBytes -= batch.change.size * group.watches.count
        if batches.isEmpty { batches = [] }
        return (batch.change, group)
    }

    /// Notes that `client` has queued events that can go out now (once, however often told).
    mutating func markReady(_ client: Int) {
        if readySet.insert(client).inserted { ready.append(client) }
    }

    /// The client ready the longest, no longer marked; nil when none is.
    mutating func nextReady() -> Int? {
        guard let client = ready.popFirst() else { return nil }
        readySet.remove(client)
        if ready.isEmpty {
            ready = []
            readySet = []
        }
        return client
    }
}
