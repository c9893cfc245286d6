#if canImport(Glibc)
import Glibc
#endif
import CLibUV
import Logging

/// What every Monarch executable (`monarch`, the workers) does first, and how it reads its
/// environment.
public enum ProcessSetup {
    /// How log lines are written.
    public enum LogFormat: String, Sendable, CaseIterable {
        /// swift-log's text lines: `2026-11-27T09:40:00+0000 info monarch: …`.
        case text
        /// One JSON object per line (``JSONLineLogHandler``), for log shippers.
        case json

        /// The environment variable that carries the format to child processes (the workers
        /// `monarch up --log-format json` starts log JSON too).
        public static let environmentVariable = "MONARCH_LOG_FORMAT"

        /// The format `MONARCH_LOG_FORMAT` names; text when it is unset or names none.
        public static var fromEnvironment: LogFormat {
            ProcessSetup.environment(environmentVariable).flatMap(LogFormat.init(rawValue:)) ?? .text
        }
    }

    /// Sends logs to standard error at `level` in `format` (by default the one
    /// `MONARCH_LOG_FORMAT` names, else text), ignores SIGPIPE (a peer that went away is an
    /// error on the write, never the end of the process), and tunes the allocator for
    /// frame-sized buffers (see ``keepLargeBuffersInTheHeap()``). Call once, at start.
    public static func start(logLevel level: Logger.Level, format: LogFormat = .fromEnvironment) {
        signal(SIGPIPE, SIG_IGN)
        keepLargeBuffersInTheHeap()
        LoggingSystem.bootstrap { label in
            switch format {
            case .text:
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            case .json:
                var handler = JSONLineLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
        }
    }

    /// Lets the allocator serve and keep buffers of up to 16 MiB (a frame's bodies) from its
    /// heap instead of mapping fresh pages for each one and handing them back at once: a 1 MB
    /// answer otherwise costs a few hundred page faults per copy. Free memory at the heap's top
    /// is given back past 32 MiB; a long-running process gives back what lies free between
    /// live blocks with ``FreedMemory/returnPeriodically(every:threshold:)``. (The
    /// environment's MALLOC_* settings win when set.)
    package static func keepLargeBuffersInTheHeap() {
        guard getenv("MALLOC_MMAP_THRESHOLD_") == nil, getenv("MALLOC_TRIM_THRESHOLD_") == nil else { return }
        monarch_tune_allocator(16 << 20, 32 << 20)
    }

    /// Raises this process's limit of open descriptors to the most it may have (its hard
    /// limit), and returns the limit now in force.
    @discardableResult
    public static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// The folder this process's executable lives in (the Monarch executables are built and
    /// installed side by side); `.` when it cannot be read.
    public static var executableDirectory: String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return "." }
        let path = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
    }

    /// The value of environment variable `name`; nil when it is unset or empty.
    public static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }
}
