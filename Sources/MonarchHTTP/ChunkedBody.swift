/// A chunked request body (RFC 9112, 7.1) read strictly: chunk sizes in hexadecimal, chunk
/// extensions of token characters only, CRLF after every size line and every chunk's data, no
/// trailer fields (a trailer could carry headers no check saw), and the decoded body within a
/// limit.
struct ChunkedBody {
    /// What reading found.
    enum Outcome: Equatable {
        /// The whole body, and how many bytes of the input it took.
        case complete(body: [UInt8], consumed: Int)
        /// More bytes are needed.
        case incomplete
        /// The framing is not a chunked body this reader accepts (400), or it is too large (413).
        case invalid(status: Int, reason: String)
    }

    /// Reads the chunked body at the start of `bytes`, decoding at most `limit` bytes of data.
    static func read(_ bytes: ArraySlice<UInt8>, limit: Int) -> Outcome {
        var body: [UInt8] = []
        var index = bytes.startIndex
        while true {
            // The size line: HEXDIG+ [ ";" extension ] CRLF.
            guard let lineEnd = lineEnd(in: bytes, from: index) else {
                // A size line longer than any sane one is refused rather than awaited.
                return bytes.endIndex - index > 1024 ? .invalid(status: 400, reason: "a chunk size line over 1 KiB") : .incomplete
            }
            if case .invalid(let status, let reason) = lineEnd { return .invalid(status: status, reason: reason) }
            guard case .found(let end) = lineEnd else { return .incomplete }
            let line = bytes[index..<end]
            let sizeText = line.prefix { $0 != UInt8(ascii: ";") }
            let extensionPart = line.dropFirst(sizeText.count)
            guard !sizeText.isEmpty, sizeText.count <= 15, sizeText.allSatisfy(isHexDigit),
                let size = Int(String(decoding: sizeText, as: UTF8.self), radix: 16)
            else { return .invalid(status: 400, reason: "a bad chunk size") }
            guard extensionPart.allSatisfy({ HTTPHeadCheck.isTokenByte($0) || $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: "=") })
            else { return .invalid(status: 400, reason: "a chunk extension with characters outside a token") }
            index = end + 2
            if size == 0 {
                // The last chunk: no trailer fields, just the final CRLF.
                guard bytes.endIndex - index >= 2 else { return .incomplete }
                guard bytes[index] == UInt8(ascii: "\r"), bytes[index + 1] == UInt8(ascii: "\n") else {
                    return .invalid(status: 400, reason: "trailer fields after the last chunk are not accepted")
                }
                return .complete(body: body, consumed: index + 2 - bytes.startIndex)
            }
            guard body.count + size <= limit else {
                return .invalid(status: 413, reason: "the body is over \(limit) bytes")
            }
            guard bytes.endIndex - index >= size + 2 else { return .incomplete }
            body.append(contentsOf: bytes[index..<(index + size)])
            index += size
            guard bytes[index] == UInt8(ascii: "\r"), bytes[index + 1] == UInt8(ascii: "\n") else {
                return .invalid(status: 400, reason: "a chunk's data is not followed by CRLF")
            }
            index += 2
        }
    }

    private enum LineEnd { case found(Int), invalid(status: Int, reason: String) }

    /// Where the CRLF ending the line at `start` is; invalid for a bare CR or LF; nil while
    /// it has not arrived.
    private static func lineEnd(in bytes: ArraySlice<UInt8>, from start: Int) -> LineEnd? {
        var index = start
        while index < bytes.endIndex {
            switch bytes[index] {
            case UInt8(ascii: "\r"):
                guard index + 1 < bytes.endIndex else { return nil }
                guard bytes[index + 1] == UInt8(ascii: "\n") else { return .invalid(status: 400, reason: "a bare CR in the chunk framing") }
                return .found(index)
            case UInt8(ascii: "\n"):
                return .invalid(status: 400, reason: "a bare LF in the chunk framing")
            default:
                index += 1
            }
        }
        return nil
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
    }
}
