/// One byte range a `Range: bytes=…` request header asks for (RFC 9110 §14.1.2), resolved
/// against a body's length.
public struct ByteRange: Sendable, Equatable {
    /// The first byte's offset.
    public var first: Int
    /// The last byte's offset (inclusive).
    public var last: Int

    /// What a `Range` header asks of a body of `length` bytes.
    public enum Selection: Sendable, Equatable {
        /// One satisfiable range: answered 206 with it.
        case range(ByteRange)
        /// A range the body cannot satisfy: answered 416.
        case unsatisfiable
        /// Nothing a cache serves a part for (no header, another unit, several ranges, bad
        /// syntax): the whole body is answered.
        case whole
    }

    /// The selection `value` (a `Range` header's value, nil when absent) makes of a body of
    /// `length` bytes: `bytes=first-last`, `bytes=first-` or `bytes=-suffix`, one range only.
    public static func selection(_ value: String?, length: Int) -> Selection {
        guard let value else { return .whole }
        let text = value.trimmingCharacters(in: " \t")
        guard text.lowercased().hasPrefix("bytes=") else { return .whole }
        let spec = text.dropFirst("bytes=".count).trimmingCharacters(in: " \t")
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .whole }
        let start = spec[..<dash], end = spec[spec.index(after: dash)...]
        func number(_ digits: Substring) -> Int? {
            guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
            return Int(digits) ?? Int.max
        }
        if start.isEmpty {
            guard let suffix = number(end) else { return .whole }
            guard suffix > 0, length > 0 else { return .unsatisfiable }
            return .range(ByteRange(first: max(0, length - suffix), last: length - 1))
        }
        guard let first = number(start) else { return .whole }
        let last: Int
        if end.isEmpty {
            last = length - 1
        } else {
            guard let given = number(end), given >= first else { return .whole }
            last = min(given, length - 1)
        }
        guard first < length else { return .unsatisfiable }
        return .range(ByteRange(first: first, last: last))
    }

    /// The `Content-Range` value of this range of a body of `length` bytes.
    public func contentRange(of length: Int) -> String { "bytes \(first)-\(last)/\(length)" }
}

extension StringProtocol {
    /// The text without the given characters at either end.
    fileprivate func trimmingCharacters(in set: String) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}
