/// Percent-decoding and percent-encoding of URL text (RFC 3986), byte by byte over UTF-8.
enum PercentEncoding {
    /// Why a piece of text could not be percent-decoded.
    enum DecodingFailure: Error, Equatable {
        /// A `%` not followed by two hexadecimal digits.
        case invalidEscape
        /// The decoded bytes are not valid UTF-8.
        case invalidUTF8
    }

    /// Decodes every `%XX` escape in `text` exactly once. A `+` stays a plus.
    static func decode(_ text: Substring) throws(DecodingFailure) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw .invalidEscape
            }
            bytes.append(high << 4 | low)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else { throw .invalidUTF8 }
        return decoded
    }

    /// Encodes every UTF-8 byte of `text` for which `keep` is false as `%XX` (upper-case hex).
    static func encode(_ text: String, keeping keep: (UInt8) -> Bool) -> String {
        guard !text.utf8.allSatisfy(keep) else { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count * 3)
        for byte in text.utf8 {
            if keep(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// RFC 3986 `unreserved`: ALPHA / DIGIT / "-" / "." / "_" / "~".
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// RFC 3986 `pchar` without escapes: unreserved, sub-delims, ":" and "@".
    /// Everything else ("/", "?", "#", "%", space, non-ASCII, …) must be escaped in a path segment.
    static func isPathSegmentCharacter(_ byte: UInt8) -> Bool {
        if isUnreserved(byte) { return true }
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
            UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
            UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"):
            return true
        default:
            return false
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
