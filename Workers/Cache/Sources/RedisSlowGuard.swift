/// Backs off a Redis that answers, but too slowly to be worth waiting for.
///
/// A Redis stalling just under the command timeout is never dropped, yet makes every lookup
/// wait for it. After ``RedisSettings/slowLimit`` slow replies (``RedisSettings/slowMs`` or
/// more) or timed-out commands in a row, Redis is **backed off**: for
/// ``RedisSettings/slowBackoffMinMs`` (doubling up to ``RedisSettings/slowBackoffMaxMs``
/// while it stays slow) commands are refused at once, as when Redis is down — a lookup misses,
/// a write is dropped. Then one command is let through as a **probe** (the others are still
/// refused until it is answered): a fast reply ends the back-off, a slow or lost one starts
/// the next, longer one.
///
/// A value type the connection keeps and drives on its loop; times are monotonic milliseconds.
struct RedisSlowGuard {
    let settings: RedisSettings
    /// Slow replies or timeouts in a row.
    private(set) var strikes = 0
    /// The next back-off's length.
    private var backoffMs: UInt64
    /// Until when commands are refused; nil when Redis is not backed off. Still set (in the
    /// past) while the probe is out.
    private(set) var backedOffUntilMs: UInt64?
    /// Whether the probe has been sent and not answered.
    private var probing = false
    /// Back-offs so far.
    private(set) var backoffs = 0

    init(settings: RedisSettings) {
        self.settings = settings
        self.backoffMs = settings.slowBackoffMinMs
    }

    /// Whether Redis is backed off at `now` (the probe, once out, counts as backed off too).
    func isBackedOff(at now: UInt64) -> Bool {
        guard let until = backedOffUntilMs else { return false }
        return now < until || probing
    }

    /// Whether a command may be sent at `now`. When a back-off has ended, the first command
    /// admitted is the probe.
    mutating func admits(at now: UInt64) -> Bool {
        guard let until = backedOffUntilMs else { return true }
        guard now >= until, !probing else { return false }
        probing = true
        return true
    }

    /// Notes a reply that took `elapsedMs`; returns true when it starts a back-off.
    mutating func noteReply(after elapsedMs: UInt64, at now: UInt64) -> Bool {
        guard elapsedMs < settings.slowMs else { return strike(at: now) }
        strikes = 0
        backoffMs = settings.slowBackoffMinMs
        backedOffUntilMs = nil
        probing = false
        return false
    }

    /// Notes a command that timed out; returns true when it starts a back-off.
    mutating func noteTimeout(at now: UInt64) -> Bool { strike(at: now) }

    /// Notes that the connection was lost: a probe under way is not coming back, so the next
    /// command admitted probes again.
    mutating func connectionLost() { probing = false }

    /// How long the current back-off has left at `now`, in milliseconds.
    func remainingMs(at now: UInt64) -> UInt64 {
        guard let until = backedOffUntilMs, until > now else { return 0 }
        return until - now
    }

    private mutating func strike(at now: UInt64) -> Bool {
        strikes += 1
        // A slow probe backs off again at once; otherwise only the limit does.
        guard probing || (backedOffUntilMs == nil && strikes >= settings.slowLimit) else { return false }
        backedOffUntilMs = now + backoffMs
        backoffMs = min(settings.slowBackoffMaxMs, backoffMs * 2)
        probing = false
        backoffs += 1
        return true
    }
}
