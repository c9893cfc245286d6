/// How far one watcher is behind, in bytes of `changed` events: what waits for it in its
/// ``WatchOutbox``, what was written to its connection and not taken yet, and what it missed
/// since it last caught up. Its connection is closed once this passes
/// ``Configuration/Limits/watchQueueBytes``. What it holds (the first two) is its charge
/// against ``Configuration/Limits/watchQueueTotalBytes``. Loop thread only.
struct WatchBacklog {
    /// The events waiting to be written.
    var outbox: WatchOutbox
    /// Bytes of events written to the connection since its write queue was last seen empty
    /// (those of them still queued are at most what the queue holds).
    private(set) var written = 0
    /// Bytes of events dropped since the outbox was last emptied by sending.
    private(set) var missed = 0
    /// The charge last reported to the coordinator.
    private(set) var charged = 0

    /// A backlog queueing at most `eventsPerWatch` events per watch.
    init(eventsPerWatch: Int) {
        outbox = WatchOutbox(limit: eventsPerWatch)
    }

    /// The bytes held for the client, given `queuedWriteBytes` in its connection's write queue:
    /// the outbox, and the events among the queued bytes.
    mutating func holding(queuedWriteBytes: Int) -> Int {
        written = min(written, queuedWriteBytes)
        return outbox.bytes + written
    }

    /// How far behind the client is, given its connection's `queuedWriteBytes`.
    mutating func behind(queuedWriteBytes: Int) -> Int {
        holding(queuedWriteBytes: queuedWriteBytes) + missed
    }

    /// Notes `bytes` of events written to the connection.
    mutating func noteWritten(_ bytes: Int) { written += bytes }

    /// Notes `bytes` of events dropped.
    mutating func noteMissed(_ bytes: Int) { missed += bytes }

    /// Notes that the client took everything the outbox held: it has caught up.
    mutating func caughtUp() { missed = 0 }

    /// Records `charge` as reported; returns the change since the last report.
    mutating func report(_ charge: Int) -> Int {
        defer { charged = charge }
        return charge - charged
    }

    /// Forgets everything (the client is closed or gone): returns the events that were waiting,
    /// and the charge to give back.
    mutating func clear() -> (events: Int, charge: Int) {
        let events = outbox.removeAll()
        let charge = charged
        (written, missed, charged) = (0, 0, 0)
        return (events, charge)
    }
}
