/// A cache key compared byte for byte, as SQLite compares keys.
///
/// `String`'s own equality is canonical equivalence (`"caf\u{e9}" == "cafe\u{301}"`), which
/// would let two keys that the file keeps apart share one slot in memory.
struct CacheKey: Hashable, Sendable {
    let string: String

    init(_ string: String) {
        self.string = string
    }

    static func == (left: CacheKey, right: CacheKey) -> Bool {
        left.string.utf8.elementsEqual(right.string.utf8)
    }

    func hash(into hasher: inout Hasher) {
        var string = self.string
        string.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Whether the key starts with the bytes of `prefix`.
    func hasBytePrefix(_ prefix: String) -> Bool {
        string.utf8.starts(with: prefix.utf8)
    }
}
