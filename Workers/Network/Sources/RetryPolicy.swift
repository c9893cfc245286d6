/// When and how long to wait before trying an exchange again: only idempotent methods, only
/// after a connection failure or a 502, 503 or 504, at most ``maxRetries`` times, waiting an
/// exponential backoff with full jitter (a uniformly random wait between zero and
/// `min(cap, base × 2^(retry − 1))`).
public struct RetryPolicy: Sendable, Hashable {
    /// Retries after the first attempt, at most.
    public var maxRetries: Int
    /// The ceiling of the first retry's wait.
    public var base: Duration
    /// The largest ceiling of any wait.
    public var cap: Duration

    /// Creates a policy; the defaults are 2 retries, base 100 ms, cap 2 s.
    public init(maxRetries: Int = 2, base: Duration = .milliseconds(100), cap: Duration = .seconds(2)) {
        self.maxRetries = max(0, maxRetries)
        self.base = base
        self.cap = cap
    }

    /// Whether `method` may be repeated without changing the outcome (GET, HEAD, PUT, DELETE).
    public static func isIdempotent(_ method: String) -> Bool {
        method == "GET" || method == "HEAD" || method == "PUT" || method == "DELETE"
    }

    /// Whether an answer with `status` is worth another attempt (502, 503, 504).
    public static func isRetryable(status: Int) -> Bool {
        status == 502 || status == 503 || status == 504
    }

    /// The ceiling of the wait before retry number `retry` (1 for the first retry).
    public func ceiling(beforeRetry retry: Int) -> Duration {
        var ceiling = base
        var doublings = max(0, retry - 1)
        while doublings > 0, ceiling < cap {
            ceiling *= 2
            doublings -= 1
        }
        return min(ceiling, cap)
    }

    /// A random wait before retry number `retry`, uniformly between zero and its ceiling.
    public func delay(beforeRetry retry: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        let ceilingNs = ceiling(beforeRetry: retry).nanoseconds
        guard ceilingNs > 0 else { return .zero }
        return .nanoseconds(Int64.random(in: 0...ceilingNs, using: &generator))
    }
}

extension Duration {
    /// The duration in nanoseconds, clamped to `Int64`.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return scaled.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
