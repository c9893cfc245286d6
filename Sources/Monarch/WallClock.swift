#if canImport(Glibc)
import Glibc
#endif

/// Where caches read the time: milliseconds since the Unix epoch. Entries record it, so
/// it must mean the same after a restart (a monotonic clock would not).
public struct WallClock: Sendable {
    private let read: @Sendable () -> Int64

    /// A clock that answers `read()`; tests pass a clock they move by hand.
    public init(_ read: @escaping @Sendable () -> Int64) {
        self.read = read
    }

    /// The time now, in milliseconds since the epoch.
    public var nowMs: Int64 { read() }

    /// The system's real-time clock.
    public static let system = WallClock {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }
}
