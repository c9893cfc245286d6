import Logging
@testable import MonarchCoordinator
import Synchronization
import Testing

/// A log handler that keeps the messages it is given.
struct RecordingLogHandler: LogHandler {
    let record: LogRecord
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        record.messages.withLock { $0.append("\(event.message)") }
    }
}

final class LogRecord: Sendable {
    let messages = Mutex<[String]>([])
    var logger: Logger { Logger(label: "test") { _ in RecordingLogHandler(record: self) } }
    var lines: [String] { messages.withLock { $0 } }
}

@Suite struct LogLimiterTests {
    @Test("A few lines per interval; the rest are counted and reported with the next line written")
    func limits() {
        let record = LogRecord()
        let logger = record.logger
        var limiter = LogLimiter(linesPerInterval: 2, interval: .seconds(10))
        let start = ContinuousClock.now
        for index in 0..<5 { limiter.log(.warning, "refused \(index)", to: logger, now: start) }
        #expect(record.lines == ["refused 0", "refused 1"])
        limiter.log(.warning, "refused 5", to: logger, now: start + .seconds(11))
        #expect(record.lines.last == "refused 5 (3 similar lines left out before this one)")
        limiter.log(.warning, "refused 6", to: logger, now: start + .seconds(11))
        #expect(record.lines.last == "refused 6")
    }
}
