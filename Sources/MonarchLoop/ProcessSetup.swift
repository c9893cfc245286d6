#if canImport(Glibc)
import Glibc
#endif
import Logging

/// What every Monarch executable (`monarch`, the workers) does first, and how it reads its
/// environment.
public enum ProcessSetup {
    /// Sends logs to standard error at `level`, and ignores SIGPIPE (a peer that went away is
    /// an error on the write, never the end of the process). Call once, at start.
    public static func start(logLevel level: Logger.Level) {
        signal(SIGPIPE, SIG_IGN)
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }

    /// The value of environment variable `name`; nil when it is unset or empty.
    public static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }
}
