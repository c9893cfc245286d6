/// Constants and small rules of the wire protocol shared by every message.
public enum WireProtocol {
    /// The protocol version this library speaks.
    public static let version = 1

    /// Whether `kind` is a valid worker kind: a lowercase letter, then lowercase letters,
    /// digits or `-`.
    public static func isValidKind(_ kind: String) -> Bool {
        var utf8 = kind.utf8.makeIterator()
        guard let first = utf8.next(), (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else {
            return false
        }
        while let byte = utf8.next() {
            let ok = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
            if !ok { return false }
        }
        return true
    }

    /// Whether `method` is a valid request method: an uppercase ASCII letter, then uppercase
    /// letters, digits, `-` and `_` (`GET`, `M-SEARCH`; never lowercase).
    public static func isValidMethod(_ method: String) -> Bool {
        guard let first = method.utf8.first, (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(first) else { return false }
        return method.utf8.allSatisfy { byte in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }
}
