import MonarchLoop
import MonarchWire

extension Coordinator {
    /// Deliveries (an event sent, queued or dropped for one watch) the fan-out makes in one
    /// loop turn at most; the rest waits for the next turn, after the loop's I/O.
    nonisolated static let watchWorkPerTurn = 1024

    /// The `changed` events on their way to watchers (see ``WatchFanout``).
    var watchFanout: WatchFanout {
        get { state.watchFanout }
        _modify { yield &state.watchFanout }
    }

    /// Watcher connections closed for falling more than ``Configuration/Limits/watchQueueBytes``
    /// behind.
    var watchersClosed: Int { watchFanout.watchersClosed }

    /// Tells each watch in `refs` of `event` (its `watch` id filled in for each), over the next
    /// loop turns. When the events would take the bytes waiting for watchers past
    /// ``Configuration/Limits/watchQueueTotalBytes``, they are dropped instead: counted, each
    /// watch concerned gets an `overflow`, and each client is that much further behind. Loop
    /// thread.
    func fanOut(_ event: ChangedMessage, to refs: Set<WatchRef>) {
        guard !refs.isEmpty else { return }
        let change = WatchFanout.Change(event)
        let groups = WatchFanout.groups(refs)
        if watchFanout.totalBytes + change.size * refs.count > limits.watchQueueTotalBytes {
            for group in groups {
                clients[group.client]?.missed(change, watches: group.watches)
            }
            return
        }
        watchFanout.add(change, to: groups)
        scheduleWatchWork()
    }

    /// Notes that `client` has queued events it can take now: they go out over the next loop
    /// turns.
    func watchEventsReady(for client: Int) {
        watchFanout.markReady(client)
        scheduleWatchWork()
    }

    /// Runs ``runWatchWork()`` on a later loop turn, after its I/O, unless it is scheduled. The
    /// timer waits 1 ms, not 0: libuv (1.44) runs a timer started from a timer's callback
    /// with no delay in the same pass, before any I/O, so the turns would run back to back.
    private func scheduleWatchWork() {
        guard !watchFanout.scheduled else { return }
        guard let timer = try? LoopTimer(on: loop) else {
            // No handle for a timer: the work runs before the loop next waits instead.
            watchFanout.scheduled = true
            loop.execute { [weak self] in CoordinatorActor.assumeIsolated { self?.runScheduledWatchWork() } }
            return
        }
        watchFanout.scheduled = true
        timer.start(afterMs: 1) { [weak self] in
            timer.close()
            CoordinatorActor.assumeIsolated { self?.runScheduledWatchWork() }
        }
    }

    /// The turn ``scheduleWatchWork()`` scheduled.
    private func runScheduledWatchWork() {
        watchFanout.scheduled = false
        runWatchWork()
    }

    /// One turn of fan-out work: up to ``watchWorkPerTurn`` deliveries, half of them at least
    /// for new changes and half for clients with queued events to send, whichever has work;
    /// schedules the next turn while work is left.
    func runWatchWork() {
        var budget = Self.watchWorkPerTurn
        func deliver(upTo limit: Int) {
            while budget > limit, let next = watchFanout.nextDelivery() {
                budget -= next.group.watches.count
                clients[next.group.client]?.deliver(next.change, to: next.group.watches)
            }
        }
        deliver(upTo: budget / 2)
        while budget > 0, let client = watchFanout.nextReady() {
            guard let session = clients[client] else { continue }
            let sent = session.flushWatchEvents(upTo: budget)
            budget -= max(sent, 1)
        }
        deliver(upTo: 0)
        if !watchFanout.isIdle { scheduleWatchWork() }
    }
}
