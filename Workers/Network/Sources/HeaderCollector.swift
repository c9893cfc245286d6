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
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<colon]), as: UTF8.self)
        let value = String(decoding: Self.trimmingSpaces(UnsafeRawBufferPointer(rebasing: bytes[(colon + 1)...])), as: UTF8.self)
        headers.add(name, value)
        if colon == 14, name.utf8.elementsEqualIgnoringASCIICase("content-length".utf8) {
            contentLength = Int(value)
        }
        return true
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
