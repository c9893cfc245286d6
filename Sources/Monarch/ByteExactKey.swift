/// A string key compared byte for byte (as SQLite and Redis compare keys).
///
/// `String`'s own equality is canonical equivalence (`"caf\u{e9}" == "cafe\u{301}"`), which
/// would let two keys that a store keeps apart share one slot in memory.
public struct ByteExactKey: Hashable, Sendable {
    /// The key.
    public let string: String

    /// The key `string`.
    @inlinable public init(_ string: String) {
        self.string = string
    }

    /// Whether the two keys hold the same UTF-8 bytes.
    @inlinable public static func == (left: ByteExactKey, right: ByteExactKey) -> Bool {
        left.string.utf8.elementsEqual(right.string.utf8)
    }

    /// Hashes the key's UTF-8 bytes.
    @inlinable public func hash(into hasher: inout Hasher) {
        var string = self.string
        string.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Whether the key starts with the bytes of `prefix`.
    @inlinable public func hasBytePrefix(_ prefix: String) -> Bool {
        string.utf8.starts(with: prefix.utf8)
    }
}
