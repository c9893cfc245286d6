/// The strict reading of a request head, before the C parser sees it: whatever a lenient
/// server would accept and another would read differently (request smuggling, header
/// injection) is refused here.
///
/// Refused with 400: a bare CR or LF (lines end with CRLF), obsolete line folding, a request
/// line that is not `METHOD SP TARGET SP HTTP/1.x`, HTTP/0.9, control characters in the
/// request line or a header, a target carrying a percent-encoded NUL, CR or LF, whitespace
/// before a header's colon, `Content-Length` given twice or beside `Transfer-Encoding`, a
/// `Content-Length` that is not digits, `Transfer-Encoding` in HTTP/1.0, an HTTP/1.1 request
/// without exactly one `Host`. 501: a transfer coding other than `chunked`. 505: another
/// version of HTTP. 414, 431: over the ``HTTPLimits``. 417: an `Expect` other than
/// `100-continue`. 501 for CONNECT. (A `Content-Length` over the body limit is the parser's
/// to refuse, once it knows the request's own limit.)
enum HTTPHeadCheck {
    /// What the check found out about a head it accepts.
    struct Facts {
        /// The declared body length, when `Content-Length` gives one (not checked against a
        /// limit yet).
        var contentLength: Int?
        /// Whether the body is chunked.
        var chunked: Bool
        /// Whether the client waits for `100 Continue` before sending its body.
        var expectsContinue: Bool
    }

    /// Checks `head`: the request line and header lines, each ending with CRLF, and the empty
    /// line that ends them (its CRLF included).
    static func check(_ head: ArraySlice<UInt8>, limits: HTTPLimits) -> Result<Facts, HTTPParseError> {
        let cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")
        var lines: [ArraySlice<UInt8>] = []
        var start = head.startIndex
        var index = head.startIndex
        while index < head.endIndex {
            let byte = head[index]
            if byte == cr {
                guard index + 1 < head.endIndex, head[index + 1] == lf else { return .failure(bad("a CR not followed by LF")) }
                lines.append(head[start..<index])
                index += 2
                start = index
                continue
            }
            if byte == lf { return .failure(bad("a line ending with a bare LF (lines end with CRLF)")) }
            index += 1
        }
        // The last line is the empty one that ends the head.
        guard let requestLine = lines.first, lines.last?.isEmpty == true else { return .failure(bad("no empty line ends the head")) }
        let headerLines = lines.dropFirst().dropLast()

        if requestLine.count > limits.requestLineBytes {
            return .failure(HTTPParseError(status: 414, "the request line is \(requestLine.count) bytes; the limit is \(limits.requestLineBytes)"))
        }
        let minor: Int
        switch checkRequestLine(requestLine) {
        case .success(let version): minor = version
        case .failure(let error): return .failure(error)
        }
        let headerBytes = headerLines.reduce(0) { $0 + $1.count + 2 }
        guard headerBytes <= limits.headerBlockBytes else {
            return .failure(HTTPParseError(status: 431, "the header lines are \(headerBytes) bytes; the limit is \(limits.headerBlockBytes)"))
        }
        guard headerLines.count <= limits.headerCount else {
            return .failure(HTTPParseError(status: 431, "\(headerLines.count) header lines; the limit is \(limits.headerCount)"))
        }

        var contentLengths: [String] = []
        var transferEncodings: [String] = []
        var hosts = 0
        var expectations: [String] = []
        for line in headerLines {
            guard let first = line.first, first != UInt8(ascii: " "), first != UInt8(ascii: "\t") else {
                return .failure(bad("a header line starts with whitespace (obsolete line folding)"))
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return .failure(bad("a header line has no colon")) }
            let name = line[line.startIndex..<colon]
            guard !name.isEmpty, name.allSatisfy(isTokenByte) else {
                return .failure(bad("a header name is empty or holds a character a token may not (whitespace before the colon?)"))
            }
            let value = line[(colon + 1)...]
            guard value.allSatisfy(isFieldValueByte) else { return .failure(bad("a header value holds a control character")) }
            // Only these four names matter here; any other is passed over without a string made.
            if named(name, "host") {
                hosts += 1
            } else if named(name, "content-length") {
                contentLengths.append(String(decoding: trimmed(value), as: UTF8.self))
            } else if named(name, "transfer-encoding") {
                transferEncodings.append(String(decoding: trimmed(value), as: UTF8.self))
            } else if named(name, "expect") {
                expectations.append(String(decoding: trimmed(value), as: UTF8.self))
            }
        }
        if minor == 1 && hosts != 1 {
            return .failure(bad(hosts == 0 ? "an HTTP/1.1 request without Host" : "\(hosts) Host headers"))
        }
        guard contentLengths.count <= 1 else { return .failure(bad("Content-Length given \(contentLengths.count) times")) }
        if !transferEncodings.isEmpty {
            guard contentLengths.isEmpty else { return .failure(bad("both Content-Length and Transfer-Encoding")) }
            guard minor == 1 else { return .failure(bad("Transfer-Encoding in an HTTP/1.0 request")) }
            guard transferEncodings.count == 1, transferEncodings[0].lowercased() == "chunked" else {
                return .failure(HTTPParseError(
                    status: 501, "the transfer coding \(transferEncodings.joined(separator: ", ")) is not implemented (only chunked)"))
            }
        }
        for expectation in expectations where expectation.lowercased() != "100-continue" {
            return .failure(HTTPParseError(status: 417, "the expectation \(expectation) cannot be met"))
        }
        var length: Int?
        if let text = contentLengths.first {
            guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (48...57).contains($0) }), let value = Int(text) else {
                return .failure(bad("Content-Length \(text) is not a number of bytes"))
            }
            length = value
        }
        return .success(Facts(contentLength: length, chunked: !transferEncodings.isEmpty, expectsContinue: !expectations.isEmpty))
    }

    /// Checks `METHOD SP TARGET SP HTTP/1.x`; returns the minor version.
    private static func checkRequestLine(_ line: ArraySlice<UInt8>) -> Result<Int, HTTPParseError> {
        // Exactly two single spaces split it in three: method, target, version.
        let space = UInt8(ascii: " ")
        let notThree = "the request line is not METHOD SP TARGET SP VERSION"
        guard let firstSpace = line.firstIndex(of: space) else { return .failure(bad(notThree)) }
        guard let secondSpace = line[(firstSpace + 1)...].firstIndex(of: space) else {
            return .failure(bad("HTTP/0.9 requests (no version) are not served"))
        }
        let versionBytes = line[(secondSpace + 1)...]
        guard !versionBytes.contains(space) else { return .failure(bad(notThree)) }
        let method = line[..<firstSpace]
        guard !method.isEmpty, method.allSatisfy(isTokenByte) else { return .failure(bad("the method is not a token")) }
        if method.elementsEqual("CONNECT".utf8) {
            return .failure(HTTPParseError(status: 501, "CONNECT is not served (no tunnels)"))
        }
        let target = line[(firstSpace + 1)..<secondSpace]
        guard !target.isEmpty, target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(bad("the target is empty or holds a space or control character"))
        }
        if let encoded = encodedLineBreakOrNUL(in: target) {
            return .failure(bad("the target holds \(encoded) (an encoded NUL, LF or CR)"))
        }
        if versionBytes.elementsEqual("HTTP/1.1".utf8) { return .success(1) }
        if versionBytes.elementsEqual("HTTP/1.0".utf8) { return .success(0) }
        let version = String(decoding: versionBytes, as: UTF8.self)
        let digits = version.utf8.dropFirst(5)
        if version.hasPrefix("HTTP/"), digits.count == 3, digits.allSatisfy({ (48...57).contains($0) || $0 == 46 }) {
            return .failure(HTTPParseError(status: 505, "\(version) is not served (HTTP/1.0 and HTTP/1.1 are)"))
        }
        return .failure(bad("the version \(version.debugDescription) is not HTTP/1.x"))
    }

    /// `%00`, `%0A` or `%0D` (in either case) when `target` holds one, as it is spelled there; nil otherwise.
    private static func encodedLineBreakOrNUL(in target: ArraySlice<UInt8>) -> String? {
        var index = target.startIndex
        while index + 2 < target.endIndex {
            if target[index] == UInt8(ascii: "%"), target[index + 1] == UInt8(ascii: "0") {
                switch target[index + 2] | 0x20 {
                case UInt8(ascii: "0"), UInt8(ascii: "a"), UInt8(ascii: "d"):
                    return String(decoding: target[index...(index + 2)], as: UTF8.self).uppercased()
                default: break
                }
            }
            index += 1
        }
        return nil
    }

    /// `tchar` of RFC 9110: letters, digits and ``!#$%&'*+-.^_`|~``.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// A byte a field value may hold: visible characters, obs-text, space and tab.
    static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte == 0x09 || (byte >= 0x20 && byte != 0x7F)
    }

    /// Whether the header name `name` is `lowercased` in any case (`lowercased` holds letters
    /// and `-` only).
    private static func named(_ name: ArraySlice<UInt8>, _ lowercased: StaticString) -> Bool {
        guard name.count == lowercased.utf8CodeUnitCount else { return false }
        return lowercased.withUTF8Buffer { expected in
            zip(name, expected).allSatisfy { $0 | 0x20 == $1 }
        }
    }

    private static func trimmed(_ value: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard let first = value.firstIndex(where: { !isSpace($0) }), let last = value.lastIndex(where: { !isSpace($0) }) else {
            return value[value.endIndex...]
        }
        return value[first...last]
    }

    private static func bad(_ reason: String) -> HTTPParseError {
        HTTPParseError(status: 400, reason)
    }
}
