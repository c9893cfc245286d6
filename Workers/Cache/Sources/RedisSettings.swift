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

    /// Settings; the defaults are the worker's.
    public init(timeoutMs: UInt64 = 1000, maxPending: Int = 4096, backoffMinMs: UInt64 = 50, backoffMaxMs: UInt64 = 2000) {
        self.timeoutMs = max(1, timeoutMs)
        self.maxPending = max(1, maxPending)
        self.backoffMinMs = max(1, backoffMinMs)
        self.backoffMaxMs = max(self.backoffMinMs, backoffMaxMs)
    }
}
