/// Case folding for HTTP field names, which are ASCII tokens: only `A`–`Z` change, so no
/// Unicode tables are consulted and a name already in lowercase is returned as it is.
extension String {
    /// The string with `A`–`Z` turned into `a`–`z`; every other character unchanged.
    var asciiLowercased: String {
        guard utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return self }
        return String(decoding: utf8.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}

extension Sequence<UInt8> {
    /// Whether both hold the same bytes once `A`–`Z` are folded to `a`–`z`.
    func elementsEqualIgnoringASCIICase(_ other: some Sequence<UInt8>) -> Bool {
        elementsEqual(other) { a, b in
            let fold = { (byte: UInt8) in byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte }
            return fold(a) == fold(b)
        }
    }
}
