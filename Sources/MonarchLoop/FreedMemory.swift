#if canImport(Glibc)
import Glibc
#endif
import CLibUV
import Logging
import Synchronization

/// Gives back to the system the memory a burst left free inside the allocator's heap.
///
/// Monarch's processes keep frame-sized buffers in the heap (see ``ProcessSetup``), and the
/// allocator by itself gives back only free memory at the heap's top. Freed blocks that lie
/// between live ones stay resident: after 1,024 clients fetched 256 KB answers at once, the
/// coordinator kept about 260 MB it no longer used. A long-running process calls
/// ``returnPeriodically(every:threshold:)`` once; from then on, free heap memory stays
/// resident only until the next check, when there is more than `threshold` of it.
public enum FreedMemory {
    /// What the allocator holds, in bytes.
    public struct HeapFigures: Sendable, Equatable {
        /// Bytes free inside the heap (resident or not).
        public var free: Int
        /// The process's resident set.
        public var resident: Int

        /// Figures of `free` heap bytes and a `resident` set.
        public init(free: Int, resident: Int) {
            self.free = free
            self.resident = resident
        }

        /// The figures of this process now.
        public static var current: HeapFigures {
            HeapFigures(free: Int(mallinfo2().fordblks), resident: residentBytes() ?? 0)
        }
    }

    /// When a check gives memory back: when more than `threshold` bytes are free in the heap
    /// and the process has grown by more than `threshold` since memory was last given back
    /// (free memory given back is still counted free, so without the second condition every
    /// check would walk the heap again for nothing).
    public struct Policy: Sendable {
        /// The free heap bytes tolerated, and the growth that makes a check worthwhile.
        public let threshold: Int
        /// The resident set just after memory was last given back (0 before).
        public private(set) var residentAfterReturn = 0

        /// A policy tolerating `threshold` bytes.
        public init(threshold: Int) { self.threshold = threshold }

        /// Whether a check seeing `figures` should give memory back.
        public func shouldReturn(_ figures: HeapFigures) -> Bool {
            figures.free > threshold && mayBeWorthReturning(resident: figures.resident)
        }

        /// Whether a process with `resident` bytes resident has grown enough since memory was
        /// last given back for the heap's free bytes to be worth counting.
        public func mayBeWorthReturning(resident: Int) -> Bool {
            resident > residentAfterReturn + threshold
        }

        /// Records the resident set just after memory was given back.
        public mutating func returned(residentAfter: Int) { residentAfterReturn = residentAfter }
    }

    private static let started = Mutex(false)

    /// Starts a thread that, every `interval`, gives free heap memory back to the system when
    /// ``Policy`` says it is worthwhile (`threshold` bytes). Once per process: later calls do
    /// nothing. Giving back holds the allocator's locks while it works (about 7 ms per 100 MB
    /// given back on a 2-core test machine), so a loop allocating meanwhile waits that long:
    /// it happens once after each burst, not on every check.
    public static func returnPeriodically(every interval: Duration = .seconds(10), threshold: Int = 32 << 20) {
        let first = started.withLock { started in
            defer { started = true }
            return !started
        }
        guard first else { return }
        let box = Unmanaged.passRetained(Periodic(interval: interval, policy: Policy(threshold: threshold)))
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { argument in
            Unmanaged<Periodic>.fromOpaque(argument!).takeRetainedValue().run()
        }, box.toOpaque())
        if result == 0 {
            pthread_detach(thread)
        } else {
            box.release()
            Logger(label: "monarch.memory").warning("freed memory will not be given back: pthread_create failed (\(result))")
        }
    }

    /// Gives free heap memory back to the system now.
    public static func returnNow() {
        _ = malloc_trim(0)
    }

    /// The resident set of this process in bytes, from `/proc/self/statm`; nil when it cannot
    /// be read.
    public static func residentBytes() -> Int? {
        let descriptor = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        // "size resident shared text lib data dt", in pages.
        let fields = buffer[..<count].split(separator: UInt8(ascii: " "))
        guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The checking thread's state.
    private final class Periodic: Sendable {
        let interval: Duration
        let policy: Policy
        let logger = Logger(label: "monarch.memory")

        init(interval: Duration, policy: Policy) {
            self.interval = interval
            self.policy = policy
        }

        func run() -> Never {
            monarch_name_current_thread("monarch-memory")
            var policy = self.policy
            while true {
                Self.sleep(interval)
                // The resident set first, from /proc without any lock: the allocator's own
                // figures (mallinfo2) walk every arena under its lock, which the loop threads
                // would wait for, so they are read only once the process has grown.
                guard let resident = FreedMemory.residentBytes(), policy.mayBeWorthReturning(resident: resident) else { continue }
                let counting = ContinuousClock.now
                let before = HeapFigures(free: Int(mallinfo2().fordblks), resident: resident)
                let counted = ContinuousClock.now - counting
                if counted > .milliseconds(50) {
                    logger.warning("counting the heap's free memory held the allocator for \(counted)")
                }
                guard policy.shouldReturn(before) else { continue }
                let start = ContinuousClock.now
                FreedMemory.returnNow()
                let after = FreedMemory.residentBytes() ?? 0
                policy.returned(residentAfter: after)
                logger.debug(
                    "gave back \(max(0, before.resident - after) >> 20) MiB of freed memory in \(ContinuousClock.now - start) (resident now \(after >> 20) MiB)")
            }
        }

        /// Sleeps for `interval`, through signals.
        private static func sleep(_ interval: Duration) {
            let (seconds, attoseconds) = interval.components
            var pause = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
            var left = timespec()
            while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
        }
    }
}
