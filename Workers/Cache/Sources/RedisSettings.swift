/// How a Redis store talks to Redis: timeouts, back-off and the bound on commands in flight.
public struct RedisSettings: Sendable, Equatable {
    /// How long a connect or a command may take before the connection is dropped (and an idle
    /// connection's ping interval), in milliseconds.
    public var timeoutMs: UInt64
    /// The most commands awaiting replies on the command connection; more are refused at
    /// once (a read misses, a write is dropped and counted).
    public var maxPending: Int
    /// The first wait before connecting again, in milliseconds; it doubles up to
    /// ``backoffMaxMs``.
    public var backoffMinMs: UInt64
    /// The longest wait before connecting again, in milliseconds.
    public var backoffMaxMs: UInt64
    /// A reply that takes this long or longer, in milliseconds, is slow: a quarter of
    /// ``timeoutMs`` by default (250 ms of the default 1 s).
    public var slowMs: UInt64
    /// Slow replies or timed-out commands in a row after which Redis is backed off: for a
    /// while, commands are refused at once (a lookup misses, a write is dropped), as when it
    /// is down, then one command probes it again.
    public var slowLimit: Int
    /// The first back-off from a slow Redis, in milliseconds; it doubles while the probes
    /// are slow too, up to ``slowBackoffMaxMs``, and starts again after a fast reply.
    public var slowBackoffMinMs: UInt64
    /// The longest back-off from a slow Redis, in milliseconds.
    public var slowBackoffMaxMs: UInt64

    /// Settings; the defaults are the worker's.
    public init(
        timeoutMs: UInt64 = 1000, maxPending: Int = 4096, backoffMinMs: UInt64 = 50, backoffMaxMs: UInt64 = 2000,
        slowMs: UInt64? = nil, slowLimit: Int = 3, slowBackoffMinMs: UInt64 = 1000, slowBackoffMaxMs: UInt64 = 30_000
    ) {
        self.timeoutMs = max(1, timeoutMs)
        self.maxPending = max(1, maxPending)
        self.backoffMinMs = max(1, backoffMinMs)
        self.backoffMaxMs = max(self.backoffMinMs, backoffMaxMs)
        self.slowMs = max(1, slowMs ?? self.timeoutMs / 4)
        self.slowLimit = max(1, slowLimit)
        self.slowBackoffMinMs = max(1, slowBackoffMinMs)
        self.slowBackoffMaxMs = max(self.slowBackoffMinMs, slowBackoffMaxMs)
    }
}
