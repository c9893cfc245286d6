import Logging
import Monarch

/// Keeps a kind of log line that peers can cause at will (refused connections, protocol
/// errors) to a few per interval, so a flood of bad peers cannot flood the log; the lines left
/// out are counted and reported with the next line that is written. Intervals are measured
/// on the clock it is given. Loop thread only.
struct LogLimiter {
    /// Lines written per interval at most.
    let linesPerInterval: Int
    /// The length of an interval.
    let interval: Duration
    private var intervalStart: ContinuousClock.Instant?
    private var written = 0
    private var suppressed = 0
    private let clock: MonotonicClock

    /// A limiter writing at most `linesPerInterval` lines per `interval` of `clock`.
    init(linesPerInterval: Int = 10, interval: Duration = .seconds(10), clock: MonotonicClock) {
        self.linesPerInterval = linesPerInterval
        self.interval = interval
        self.clock = clock
    }

    /// Writes `message` at `level` to `logger` unless this interval's lines are used up.
    mutating func log(_ level: Logger.Level, _ message: @autoclosure () -> String, to logger: Logger) {
        let now = clock.now
        if intervalStart.map({ now - $0 >= interval }) ?? true {
            intervalStart = now
            written = 0
        }
        guard written < linesPerInterval else {
            suppressed += 1
            return
        }
        written += 1
        var line = message()
        if suppressed > 0 {
            line += " (\(suppressed) similar line\(suppressed == 1 ? "" : "s") left out before this one)"
            suppressed = 0
        }
        logger.log(level: level, "\(line)")
    }
}
