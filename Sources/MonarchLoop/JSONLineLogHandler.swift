#if canImport(Glibc)
import Glibc
#endif
import Logging

/// A log handler writing one JSON object per line to standard error, for log shippers:
/// `{"time":"2026-11-27T09:40:00.123Z","level":"info","label":"monarch","message":"…"}`,
/// plus `"metadata"` (an object of strings) when there is any and `"source"`.
///
/// Each line goes out in one `write`, so lines from several threads never interleave.
public struct JSONLineLogHandler: LogHandler {
    /// The logger's label (`monarch`, a worker's name).
    public let label: String
    /// The lowest level written.
    public var logLevel: Logger.Level = .info
    /// Metadata added to every line of this handler.
    public var metadata: Logger.Metadata = [:]

    /// A handler for the logger `label`.
    public init(label: String) { self.label = label }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line = "{\"time\":\"\(Self.timestamp())\",\"level\":\"\(event.level.rawValue)\",\"label\":"
        Self.appendString(label, to: &line)
        line += ",\"message\":"
        Self.appendString(event.message.description, to: &line)
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        if !merged.isEmpty {
            line += ",\"metadata\":{"
            for (index, key) in merged.keys.sorted().enumerated() {
                if index > 0 { line += "," }
                Self.appendString(key, to: &line)
                line += ":"
                Self.appendString(merged[key]!.description, to: &line)
            }
            line += "}"
        }
        line += ",\"source\":"
        Self.appendString(event.source, to: &line)
        line += "}\n"
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(STDERR_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped.
    static func appendString(_ text: String, to line: inout String) {
        line += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": line += "\\\""
            case "\\": line += "\\\\"
            case "\n": line += "\\n"
            case "\r": line += "\\r"
            case "\t": line += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                line += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: line.unicodeScalars.append(scalar)
            }
        }
        line += "\""
    }

    /// Now, in UTC, to the millisecond: `2026-11-27T09:40:00.123Z`.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let milliseconds = Int(now.tv_nsec / 1_000_000)
        let fraction = milliseconds < 10 ? "00\(milliseconds)" : milliseconds < 100 ? "0\(milliseconds)" : "\(milliseconds)"
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)Z"
    }
}
