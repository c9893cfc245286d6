import MonarchWire

/// A session's `changed` events: what the coordinator's fan-out hands it, bounded per client
/// (``Configuration/Limits/watchQueueBytes``) and in all
/// (``Configuration/Limits/watchQueueTotalBytes``).
extension ClientSession {
    /// Reports what the client's events hold now to the coordinator's total; returns it.
    @discardableResult
    func rechargeWatchBytes() -> Int {
        let holding = watchBacklog.holding(queuedWriteBytes: connection.queuedWriteBytes)
        coordinator.watchFanout.queuedBytes += watchBacklog.report(holding)
        return holding
    }

    /// Hands `change` to the client's `watches`, each as the rules allow: sent at once while
    /// the client takes what it is sent and nothing of the watch waits; else queued in the
    /// bounded ``WatchOutbox`` (or dropped for an `overflow`); dropped for an `overflow` too
    /// when the bytes waiting for all watchers would pass their total. A client that would be
    /// more than its ``Configuration/Limits/watchQueueBytes`` behind is closed instead.
    func deliver(_ change: WatchFanout.Change, to watches: [MessageID]) {
        guard connection.isOpen else { return }
        let limits = coordinator.limits
        let live = watches.filter { coordinator.watches.contains(WatchRef(client: id, watch: $0)) }
        for (index, watch) in live.enumerated() {
            rechargeWatchBytes()
            let behind = watchBacklog.behind(queuedWriteBytes: connection.queuedWriteBytes)
            if behind + change.size > limits.watchQueueBytes {
                closeBehindWatcher(losing: live.count - index)
                return
            }
            var event = change.event
            event.watch = watch
            if coordinator.watchFanout.totalBytes + change.size > limits.watchQueueTotalBytes {
                watchBacklog.outbox.drop(watch)
                lose(change.size)
            } else if watchBacklog.outbox.isClear(watch), connection.isWritable {
                sendWatchEvent(event)
            } else if !watchBacklog.outbox.enqueue(event) {
                lose(change.size)
            }
        }
        rechargeWatchBytes()
        if !watchBacklog.outbox.isEmpty, connection.isWritable { coordinator.watchEventsReady(for: id) }
    }

    /// Notes that `change` was dropped for the client's `watches` before it reached them (the
    /// bytes waiting for all watchers were at their total): each gets an `overflow`, and the
    /// client is that much further behind — closed when more than its
    /// ``Configuration/Limits/watchQueueBytes``.
    func missed(_ change: WatchFanout.Change, watches: [MessageID]) {
        guard connection.isOpen else { return }
        let live = watches.filter { coordinator.watches.contains(WatchRef(client: id, watch: $0)) }
        guard !live.isEmpty else { return }
        for watch in live {
            watchBacklog.outbox.drop(watch)
            lose(change.size)
        }
        rechargeWatchBytes()
        if watchBacklog.behind(queuedWriteBytes: connection.queuedWriteBytes) > coordinator.limits.watchQueueBytes {
            closeBehindWatcher(losing: 0)
        } else if connection.isWritable {
            coordinator.watchEventsReady(for: id)
        }
    }

    /// Counts one event of `size` bytes as dropped for the client.
    private func lose(_ size: Int) {
        coordinator.watchEventsDropped += 1
        watchBacklog.noteMissed(size)
    }

    /// Sends up to `limit` of the waiting events while the client takes them; returns how many
    /// went out. A client with more to send and room for it is marked ready again; one whose
    /// outbox emptied has caught up.
    func flushWatchEvents(upTo limit: Int) -> Int {
        var sent = 0
        while sent < limit, connection.isOpen, connection.isWritable, let event = watchBacklog.outbox.next() {
            sendWatchEvent(event)
            sent += 1
        }
        if watchBacklog.outbox.isEmpty {
            watchBacklog.caughtUp()
        } else if connection.isOpen, connection.isWritable {
            coordinator.watchEventsReady(for: id)
        }
        rechargeWatchBytes()
        return sent
    }

    /// Forgets the events waiting for `watch` (it was unwatched).
    func forgetWatch(_ watch: MessageID) {
        watchBacklog.outbox.forget(watch)
        rechargeWatchBytes()
    }

    /// Gives back what the client's events held (it is closed, or gone); returns how many
    /// events were waiting.
    @discardableResult
    func releaseWatchBytes() -> Int {
        let (events, charge) = watchBacklog.clear()
        coordinator.watchFanout.queuedBytes -= charge
        return events
    }

    private func sendWatchEvent(_ event: ChangedMessage) {
        let before = connection.queuedWriteBytes
        coordinator.watchEventsSent += 1
        try? connection.send(.changed(event))
        watchBacklog.noteWritten(max(connection.queuedWriteBytes - before, 0))
    }

    /// Closes the connection of a client too far behind (as Redis closes a pub/sub client
    /// past its output buffer limit): what waited for it, and `losing` events more, are
    /// counted as dropped, and its bytes are given back at once.
    private func closeBehindWatcher(losing: Int) {
        let waiting = releaseWatchBytes()
        coordinator.watchEventsDropped += waiting + losing
        coordinator.watchFanout.watchersClosed += 1
        coordinator.peerLog.log(
            .warning,
            "closing client \(id): its watches are more than limits.watchQueue (\(coordinator.limits.watchQueueBytes) bytes) behind",
            to: coordinator.logger)
        connection.close()
    }
}
