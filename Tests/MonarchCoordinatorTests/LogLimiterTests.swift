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
        let clock = TestClock()
        var limiter = LogLimiter(linesPerInterval: 2, interval: .seconds(10), clock: clock.clock)
        for index in 0..<5 { limiter.log(.warning, "refused \(index)", to: logger) }
        #expect(record.lines == ["refused 0", "refused 1"])
        // Not yet a new interval: still left out.
        clock.advance(by: .milliseconds(9_999))
        limiter.log(.warning, "refused 5", to: logger)
        #expect(record.lines.count == 2)
        clock.advance(by: .milliseconds(1))
        limiter.log(.warning, "refused 6", to: logger)
        #expect(record.lines.last == "refused 6 (4 similar lines left out before this one)")
        limiter.log(.warning, "refused 7", to: logger)
        #expect(record.lines.last == "refused 7")
        limiter.log(.warning, "refused 8", to: logger)
        #expect(record.lines.count == 4)
    }
}
