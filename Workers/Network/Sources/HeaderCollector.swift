/// Collects the header lines libcurl hands a transfer's header callback and keeps those of
/// the last response only: a status line starts a new set, so the headers of a
/// `100 Continue` (or of any interim response) are dropped.
struct HeaderCollector {
    /// The headers of the response seen last.
    private(set) var headers = HTTPHeaders()
    /// The `Content-Length` of the response seen last, when it announced a valid one.
    private(set) var contentLength: Int?
    /// The status of the response seen last.
    private(set) var status: Int?

    /// Fields a response usually has at most: room for them is made once, not as they come.
    static let usualFieldCount = 16

    /// Takes one raw line (with its CRLF) and returns whether it was a header field (rather
    /// than a status line, the blank line or something unparsable).
    @discardableResult
    mutating func take(_ line: UnsafeRawBufferPointer) -> Bool {
        var end = line.count
        while end > 0, line[end - 1] == UInt8(ascii: "\n") || line[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        guard end > 0 else { return false }
        let bytes = UnsafeRawBufferPointer(rebasing: line[..<end])
        if bytes.starts(with: "HTTP/".utf8) {
            headers = HTTPHeaders(capacity: Self.usualFieldCount)
            contentLength = nil
            status = Self.status(in: bytes)
            return false
        }
        // A folded continuation line (obsolete) extends the previous field.
        if bytes[0] == UInt8(ascii: " ") || bytes[0] == UInt8(ascii: "\t") {
            if let last = headers.fields.last {
                let more = String(decoding: bytes, as: UTF8.self).trimmingSpaces
                headers[last.name] = last.value + " " + more
            }
            return false
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0 else { return false }
        let nameBytes = UnsafeRawBufferPointer(rebasing: bytes[..<colon])
        let valueBytes = Self.trimmingSpaces(UnsafeRawBufferPointer(rebasing: bytes[(colon + 1)...]))
        let name = String(decoding: nameBytes, as: UTF8.self)
        // The lowercase spelling is made from the bytes, once; a name already in lowercase is
        // its own (both short ones are stored inline, with no allocation).
        let key = nameBytes.contains(where: { $0 &- UInt8(ascii: "A") < 26 })
            ? String(unsafeUninitializedCapacity: colon) { buffer in
                for (offset, byte) in nameBytes.enumerated() { buffer[offset] = byte.asciiLowercased }
                return colon
            }
            : name
        headers.add(name, lowercased: key, String(decoding: valueBytes, as: UTF8.self))
        if colon == 14, key == "content-length" {
            contentLength = Self.decimal(valueBytes)
        }
        return true
    }

    /// The number `bytes` spell in decimal, as `Int(_:)` reads it (an optional sign, then
    /// digits only), or nil; read where it lies, with no string made.
    private static func decimal(_ bytes: UnsafeRawBufferPointer) -> Int? {
        var digits = bytes[...]
        var negative = false
        if let sign = digits.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            negative = sign == UInt8(ascii: "-")
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty else { return nil }
        var value = 0
        for byte in digits {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times10.addingReportingOverflow(negative ? -Int(digit) : Int(digit))
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return value
    }

    /// `bytes` without leading and trailing spaces and tabs.
    private static func trimmingSpaces(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return UnsafeRawBufferPointer(rebasing: bytes[0..<0]) }
        return UnsafeRawBufferPointer(rebasing: bytes[first...last])
    }

    /// The status code in a status line such as `HTTP/1.1 200 OK` or `HTTP/2 304`.
    private static func status(in line: UnsafeRawBufferPointer) -> Int? {
        guard let space = line.firstIndex(of: UInt8(ascii: " ")) else { return nil }
        var code = 0
        var digits = 0
        for byte in line[(space + 1)...] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { break }
            code = code * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
            if digits == 3 { break }
        }
        return digits == 3 ? code : nil
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
