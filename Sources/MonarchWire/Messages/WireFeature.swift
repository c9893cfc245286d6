/// The protocol extensions a connection may agree to in its handshake (protocol section 4):
/// the connecting side lists what it can use in `hello.features`, the listener answers with
/// the ones the connection uses in `welcome.features`. Names a side does not know are ignored.
public enum WireFeature {
    /// Bodies travel as their raw bytes after the message's JSON, in the same frame, instead of
    /// base64 inside it (protocol section 2.1).
    public static let rawBodies = "rawBodies"

    /// Every extension this library speaks.
    public static let supported: [String] = [rawBodies]

    /// The most names a `features` list may hold.
    public static let maxCount = 32

    /// Whether `name` may name a feature: a letter, then up to 63 letters or digits.
    public static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= 64, first.isASCIILetter else { return false }
        return bytes.allSatisfy { $0.isASCIILetter || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// The features of `offered` this side agrees to: those it speaks, in the order offered.
    public static func agreed(to offered: [String]?) -> [String] {
        (offered ?? []).filter(supported.contains)
    }

    /// Decodes an optional `features` list: at most ``maxCount`` valid names.
    static func decodeList<Key: CodingKey>(from container: KeyedDecodingContainer<Key>, forKey key: Key) throws -> [String]? {
        guard let list = try container.decodeIfPresent([String].self, forKey: key) else { return nil }
        guard list.count <= maxCount else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "at most \(maxCount) features, got \(list.count)")
        }
        if let bad = list.first(where: { !isValidName($0) }) {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container,
                debugDescription: "a feature is a letter then up to 63 letters or digits, not \(LogText.quoted(bad))")
        }
        return list
    }
}

extension UInt8 {
    fileprivate var isASCIILetter: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
    }
}
