/// Reads JSON values from a payload's bytes, for ``HotMessageCodec``: strict, allocation-light,
/// and giving up (nil, false) on anything it does not read with certainty — the caller then
/// leaves the payload to the full decoder, which says precisely what is wrong.
struct JSONCursor {
    let bytes: UnsafeRawBufferPointer
    var index: Int

    init(_ bytes: UnsafeRawBufferPointer, at index: Int = 0) {
        self.bytes = bytes
        self.index = index
    }

    var isAtEnd: Bool { index >= bytes.count }

    /// The byte at the cursor, if any.
    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    @inline(__always)
    mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// Consumes `byte` after any whitespace; false when something else is there.
    mutating func consume(_ byte: UInt8) -> Bool {
        skipSpace()
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Consumes `null` if it is there.
    mutating func consumeNull() -> Bool {
        skipSpace()
        return consumeLiteral("null")
    }

    private mutating func consumeLiteral(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let matches = literal.withUTF8Buffer { expected in
            for offset in 0..<count where bytes[index + offset] != expected[offset] { return false }
            return true
        }
        if matches { index += count }
        return matches
    }

    /// A JSON boolean.
    mutating func bool() -> Bool? {
        skipSpace()
        if consumeLiteral("true") { return true }
        if consumeLiteral("false") { return false }
        return nil
    }

    /// A non-negative JSON integer (no sign, fraction or exponent, no leading zero) that fits in
    /// `UInt64`.
    mutating func unsignedInteger() -> UInt64? {
        skipSpace()
        let start = index
        var value: UInt64 = 0
        while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (plus, overflow2) = times.addingReportingOverflow(UInt64(bytes[index] - 0x30))
            guard !overflow, !overflow2 else { return nil }
            value = plus
            index += 1
        }
        let digits = index - start
        guard digits > 0, !(digits > 1 && bytes[start] == 0x30) else { return nil }
        // A fraction or exponent makes it another number: not read here.
        if let next = peek, next == UInt8(ascii: ".") || next == UInt8(ascii: "e") || next == UInt8(ascii: "E") {
            return nil
        }
        return value
    }

    /// The bytes of a key between its quotes, when it has no escapes (keys here never do).
    mutating func plainKey() -> UnsafeRawBufferPointer? {
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        var end = start
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
            end += 1
        }
        guard end < bytes.count else { return nil }
        index = end + 1
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }

    /// The index of the first quote, backslash or control character at or after `start`.
    /// Eight bytes at a time (a body's base64 is megabytes of bytes that are none of these).
    private static func firstSpecial(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let count = bytes.count
        var index = start
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while index + 8 <= count {
            let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            // A byte of `x` is zero → its high bit in (x - ones) & ~x; below 0x20 → likewise with 0x20s.
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            let found = ((quote &- ones) & ~quote | (backslash &- ones) & ~backslash | (word &- ones &* 0x20) & ~word) & highs
            if found != 0 {
                // Borrows may flag a byte that is none of these: look at the eight one by one.
                for offset in 0..<8 {
                    let byte = base.load(fromByteOffset: index + offset, as: UInt8.self)
                    if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { return index + offset }
                }
            }
            index += 8
        }
        while index < count {
            let byte = base.load(fromByteOffset: index, as: UInt8.self)
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { return index }
            index += 1
        }
        return nil
    }

    /// Skips a JSON string without building it when it has no escapes; one with escapes is
    /// built (to check them, surrogates included). False when it is not a valid string.
    mutating func skipString() -> Bool {
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return false }
        guard let end = Self.firstSpecial(in: bytes, from: index + 1) else { return false }
        if bytes[end] == UInt8(ascii: "\"") {
            index = end + 1
            return true
        }
        return string() != nil
    }

    /// The bytes between the quotes of a JSON string without escapes (a body's base64); nil
    /// for anything else.
    mutating func plainString() -> UnsafeRawBufferPointer? {
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        guard let end = Self.firstSpecial(in: bytes, from: start), bytes[end] == UInt8(ascii: "\"") else { return nil }
        index = end + 1
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }

    /// A JSON string, escapes decoded.
    mutating func string() -> String? {
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        // The common case: no escapes, the bytes are the string (UTF-8 was checked before).
        guard let end = Self.firstSpecial(in: bytes, from: start) else { return nil }
        if bytes[end] == UInt8(ascii: "\"") {
            index = end + 1
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        }
        guard bytes[end] == UInt8(ascii: "\\") else { return nil }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(2 * (end - start) + 16)
        decoded.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
        index = end
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: decoded, as: UTF8.self)
            }
            if byte < 0x20 { return nil }
            guard byte == UInt8(ascii: "\\") else {
                decoded.append(byte)
                index += 1
                continue
            }
            guard index + 1 < bytes.count else { return nil }
            let escape = bytes[index + 1]
            index += 2
            switch escape {
            case UInt8(ascii: "\""): decoded.append(0x22)
            case UInt8(ascii: "\\"): decoded.append(0x5C)
            case UInt8(ascii: "/"): decoded.append(0x2F)
            case UInt8(ascii: "b"): decoded.append(0x08)
            case UInt8(ascii: "f"): decoded.append(0x0C)
            case UInt8(ascii: "n"): decoded.append(0x0A)
            case UInt8(ascii: "r"): decoded.append(0x0D)
            case UInt8(ascii: "t"): decoded.append(0x09)
            case UInt8(ascii: "u"):
                guard let unit = hexUnit() else { return nil }
                var scalarValue = UInt32(unit)
                if (0xD800...0xDBFF).contains(unit) {
                    // A high surrogate must be followed by its low one.
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                    else { return nil }
                    index += 2
                    guard let low = hexUnit(), (0xDC00...0xDFFF).contains(low) else { return nil }
                    scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(unit) {
                    return nil
                }
                guard let scalar = Unicode.Scalar(scalarValue) else { return nil }
                decoded.append(contentsOf: String(Character(scalar)).utf8)
            default:
                return nil
            }
        }
        return nil
    }

    private mutating func hexUnit() -> UInt16? {
        guard index + 4 <= bytes.count else { return nil }
        var value: UInt16 = 0
        for offset in 0..<4 {
            let byte = bytes[index + offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt16(digit)
        }
        index += 4
        return value
    }

    /// Skips one JSON value of any kind; false when it is not one this cursor reads.
    mutating func skipValue(depth: Int = 0) -> Bool {
        guard depth < 64 else { return false }
        skipSpace()
        guard let byte = peek else { return false }
        switch byte {
        case UInt8(ascii: "\""):
            return skipString()
        case UInt8(ascii: "{"):
            index += 1
            if consume(UInt8(ascii: "}")) { return true }
            repeat {
                guard string() != nil, consume(UInt8(ascii: ":")), skipValue(depth: depth + 1) else { return false }
            } while consume(UInt8(ascii: ","))
            return consume(UInt8(ascii: "}"))
        case UInt8(ascii: "["):
            index += 1
            if consume(UInt8(ascii: "]")) { return true }
            repeat {
                guard skipValue(depth: depth + 1) else { return false }
            } while consume(UInt8(ascii: ","))
            return consume(UInt8(ascii: "]"))
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            return bool() != nil
        case UInt8(ascii: "n"):
            return consumeNull()
        default:
            return skipNumber()
        }
    }

    /// Whether an object in the value at the cursor has a member name twice (names compared as
    /// the code points they decode to: `"a"` and `"\u0061"` are one name); nil when the value
    /// is not one this cursor reads (or nests deeper than 64), which the full decoder judges.
    mutating func hasDuplicateName(depth: Int = 0) -> Bool? {
        guard depth < 64 else { return nil }
        skipSpace()
        switch peek {
        case UInt8(ascii: "{"):
            index += 1
            if consume(UInt8(ascii: "}")) { return false }
            var names: Set<[UInt8]> = []
            var duplicate = false
            repeat {
                guard let name = string(), consume(UInt8(ascii: ":")) else { return nil }
                if !names.insert(Array(name.utf8)).inserted { duplicate = true }
                guard let inner = hasDuplicateName(depth: depth + 1) else { return nil }
                duplicate = duplicate || inner
            } while consume(UInt8(ascii: ","))
            return consume(UInt8(ascii: "}")) ? duplicate : nil
        case UInt8(ascii: "["):
            index += 1
            if consume(UInt8(ascii: "]")) { return false }
            var duplicate = false
            repeat {
                guard let inner = hasDuplicateName(depth: depth + 1) else { return nil }
                duplicate = duplicate || inner
            } while consume(UInt8(ascii: ","))
            return consume(UInt8(ascii: "]")) ? duplicate : nil
        default:
            return skipValue(depth: depth) ? false : nil
        }
    }

    /// Skips a JSON number of any form.
    private mutating func skipNumber() -> Bool {
        let start = index
        if peek == UInt8(ascii: "-") { index += 1 }
        let digitsStart = index
        while let byte = peek, (0x30...0x39).contains(byte) { index += 1 }
        guard index > digitsStart, !(index - digitsStart > 1 && bytes[digitsStart] == 0x30) else { return false }
        if peek == UInt8(ascii: ".") {
            index += 1
            let fraction = index
            while let byte = peek, (0x30...0x39).contains(byte) { index += 1 }
            guard index > fraction else { return false }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            let exponent = index
            while let byte = peek, (0x30...0x39).contains(byte) { index += 1 }
            guard index > exponent else { return false }
        }
        return index > start
    }

    /// A JSON object of strings, such as headers; nil for anything else, or a name given twice.
    mutating func stringMap() -> [String: String]? {
        guard consume(UInt8(ascii: "{")) else { return nil }
        if consume(UInt8(ascii: "}")) { return [:] }
        // Room for a response's usual headers at once, rather than growing entry by entry.
        var map: [String: String] = Dictionary(minimumCapacity: 8)
        repeat {
            guard let name = string(), consume(UInt8(ascii: ":")), let value = string() else { return nil }
            guard map.updateValue(value, forKey: name) == nil else { return nil }
        } while consume(UInt8(ascii: ","))
        return consume(UInt8(ascii: "}")) ? map : nil
    }
}
