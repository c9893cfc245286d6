#if canImport(Glibc)
import Glibc
#endif

/// What the load generator needs from a `response` frame, read without decoding it: the
/// id, the status, who answered and how many bytes the body holds.
struct ScannedResponse {
    /// The id of the request answered.
    var id: UInt64
    /// The HTTP-style status.
    var status: Int
    /// The `source` field, when present.
    var source: String?
    /// The body's length in bytes, computed from its base64 text (not decoded), or the length
    /// of a raw body.
    var bodyBytes: Int
}

/// Reads a `response` payload's top-level fields straight from its bytes, so that a load
/// generator spends no time decoding bodies it only counts.
///
/// Anything else — another message type, escapes in a key, the body or the source, a field
/// given twice, malformed JSON — gives nil, and the caller decodes the frame with
/// `MessageCodec` instead, which names any defect. It reads what it needs and checks little
/// else: it is a load tool's shortcut, not a validator.
enum AnswerScanner {
    /// The response in `payload`, or nil to leave the frame to the full decoder.
    static func scan(_ payload: [UInt8]) -> ScannedResponse? {
        payload.withUnsafeBufferPointer { bytes in
            // A raw-body payload (protocol section 2.1): 0x01, the JSON's length, the JSON, the body.
            guard bytes.first == 0x01 else { return scan(bytes: bytes) }
            guard bytes.count >= 5 else { return nil }
            let jsonCount = Int(bytes[1]) << 24 | Int(bytes[2]) << 16 | Int(bytes[3]) << 8 | Int(bytes[4])
            guard jsonCount <= bytes.count - 5, var response = scan(bytes: UnsafeBufferPointer(rebasing: bytes[5..<5 + jsonCount])) else {
                return nil
            }
            response.bodyBytes = bytes.count - 5 - jsonCount
            return response
        }
    }

    private static func scan(bytes: UnsafeBufferPointer<UInt8>) -> ScannedResponse? {
        var index = 0
        let end = bytes.count
        func skipSpace() {
            while index < end, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                index += 1
            }
        }
        /// A plain string (no escapes) at `index`: its bytes' range, index moved past it.
        /// Found with memchr, which reads a long body's base64 many bytes at a time.
        func plainString() -> Range<Int>? {
            guard index < end, bytes[index] == UInt8(ascii: "\""), let base = bytes.baseAddress else { return nil }
            let start = index + 1
            guard let quote = memchr(base + start, Int32(UInt8(ascii: "\"")), end - start) else { return nil }
            let stop = start + (UnsafeRawPointer(quote) - UnsafeRawPointer(base + start))
            if memchr(base + start, Int32(UInt8(ascii: "\\")), stop - start) != nil { return nil }
            index = stop + 1
            return start..<stop
        }
        /// Skips any JSON value at `index` (strings with escapes, nested objects and arrays).
        func skipValue() -> Bool {
            guard index < end else { return false }
            var depth = 0
            repeat {
                guard index < end else { return false }
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    while index < end, bytes[index] != UInt8(ascii: "\"") {
                        index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                    }
                    guard index < end else { return false }
                    index += 1
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    index += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    guard depth > 0 else { return false }
                    depth -= 1
                    index += 1
                default:
                    // A number, a literal, or punctuation and space inside a container.
                    if depth == 0 {
                        while index < end, bytes[index] != UInt8(ascii: ","), bytes[index] != UInt8(ascii: "}") {
                            index += 1
                        }
                        return true
                    }
                    index += 1
                }
            } while depth > 0
            return true
        }
        func unsigned() -> UInt64? {
            var value: UInt64 = 0
            var digits = 0
            while index < end, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                value = value &* 10 &+ UInt64(bytes[index] &- UInt8(ascii: "0"))
                digits += 1
                index += 1
            }
            return digits > 0 && digits <= 16 ? value : nil
        }
        func matches(_ range: Range<Int>, _ name: StaticString) -> Bool {
            guard range.count == name.utf8CodeUnitCount else { return false }
            let expected = name.utf8Start
            for offset in 0..<range.count where bytes[range.lowerBound + offset] != expected[offset] { return false }
            return true
        }

        skipSpace()
        guard index < end, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        var isResponse = false
        var id: UInt64?
        var status: Int?
        var source: String?
        var bodyBytes: Int?
        skipSpace()
        if index < end, bytes[index] == UInt8(ascii: "}") { return nil }
        while true {
            skipSpace()
            guard let key = plainString() else { return nil }
            skipSpace()
            guard index < end, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            skipSpace()
            if matches(key, "type") {
                guard !isResponse, let value = plainString(), matches(value, "response") else { return nil }
                isResponse = true
            } else if matches(key, "id") {
                guard id == nil, let value = unsigned() else { return nil }
                id = value
            } else if matches(key, "status") {
                guard status == nil, let value = unsigned(), value >= 100, value <= 599 else { return nil }
                status = Int(value)
            } else if matches(key, "source") {
                guard source == nil, let value = plainString() else { return nil }
                source = String(decoding: UnsafeBufferPointer(rebasing: bytes[value]), as: UTF8.self)
            } else if matches(key, "body") {
                guard bodyBytes == nil, let value = plainString() else { return nil }
                let count = value.count
                guard count % 4 == 0 else { return nil }
                var padding = 0
                if count > 0, bytes[value.upperBound - 1] == UInt8(ascii: "=") { padding += 1 }
                if count > 1, bytes[value.upperBound - 2] == UInt8(ascii: "=") { padding += 1 }
                bodyBytes = count / 4 * 3 - padding
            } else {
                guard skipValue() else { return nil }
            }
            skipSpace()
            guard index < end else { return nil }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "}") else { return nil }
            break
        }
        guard isResponse, let id, let status else { return nil }
        return ScannedResponse(id: id, status: status, source: source, bodyBytes: bodyBytes ?? 0)
    }
}
