/// Case folding for protocol text that is ASCII by definition (HTTP field names, host names):
/// only `A`–`Z` change, so no Unicode tables are consulted.
extension UInt8 {
    /// The byte with `A`–`Z` folded to `a`–`z`; every other byte unchanged.
    @inlinable
    package var asciiLowercased: UInt8 { self >= UInt8(ascii: "A") && self <= UInt8(ascii: "Z") ? self | 0x20 : self }
}

extension String {
    /// The string with `A`–`Z` turned into `a`–`z`; every other character unchanged. A string
    /// already in lowercase is returned as it is.
    package var asciiLowercased: String {
        guard utf8.contains(where: { $0.asciiLowercased != $0 }) else { return self }
        let count = utf8.count
        return String(unsafeUninitializedCapacity: count) { buffer in
            var written = 0
            for byte in utf8 {
                buffer[written] = byte.asciiLowercased
                written += 1
            }
            return written
        }
    }
}

extension Sequence<UInt8> {
    /// Whether both hold the same bytes once `A`–`Z` are folded to `a`–`z`. Inlinable, so
    /// that callers in other modules get it specialised for their sequences.
    @inlinable
    package func elementsEqualIgnoringASCIICase(_ other: some Sequence<UInt8>) -> Bool {
        elementsEqual(other) { $0.asciiLowercased == $1.asciiLowercased }
    }
}
