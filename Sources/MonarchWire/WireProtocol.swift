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

    /// Whether `method` is a valid request method: one or more uppercase ASCII letters.
    public static func isValidMethod(_ method: String) -> Bool {
        !method.isEmpty && method.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
    }
}
