/// A chunked request body (RFC 9112, 7.1) read strictly: chunk sizes in hexadecimal, chunk
/// extensions of token characters only, CRLF after every size line and every chunk's data, no
/// trailer fields (a trailer could carry headers no check saw), and the decoded body within a
/// limit.
///
/// It reads as the bytes arrive: each ``read(_:)`` takes what it can decide on (whole size
/// lines, chunk data, a chunk's CRLF) and says how many bytes it took, so the caller drops them
/// and never hands them over again. However small the chunks and the pieces they arrive in,
/// each byte is looked at once (a size line still arriving, at most 1 KiB, again), and the
/// framing never piles up: what is kept is the decoded body.
struct ChunkedBody {
    /// What reading found.
    enum Outcome: Equatable {
        /// The body is whole (``body``); `consumed` bytes of the input were taken, up to the
        /// CRLF after the last chunk.
        case complete(consumed: Int)
        /// More bytes are needed; `consumed` bytes of the input were taken (and are not to be
        /// handed over again).
        case incomplete(consumed: Int)
        /// The framing is not a chunked body this reader accepts (400), or it is too large (413).
        case invalid(status: Int, reason: String)
    }

    /// Where the reading is.
    private enum State {
        /// At a size line.
        case size
        /// Inside a chunk's data, with this many bytes of it to come.
        case data(remaining: Int)
        /// At the CRLF after a chunk's data.
        case dataEnd
        /// At the CRLF after the last (empty) chunk.
        case end
    }

    /// The most data bytes the body may decode to (over it: 413).
    let limit: Int
    /// The data decoded so far (all of it once ``read(_:)`` said `complete`).
    private(set) var body: [UInt8] = []
    private var state = State.size

    /// A reader of one body of at most `limit` data bytes.
    init(limit: Int) {
        self.limit = limit
    }

    /// Reads on from the start of `bytes`, the input that follows what earlier calls took.
    mutating func read(_ bytes: ArraySlice<UInt8>) -> Outcome {
        var index = bytes.startIndex
        while true {
            switch state {
            case .size:
                // The size line: HEXDIG+ [ ";" extension ] CRLF.
                let end: Int
                switch Self.lineEnd(in: bytes, from: index) {
                case nil:
                    // A size line longer than any sane one is refused rather than awaited.
                    if bytes.endIndex - index > 1024 { return .invalid(status: 400, reason: "a chunk size line over 1 KiB") }
                    return .incomplete(consumed: index - bytes.startIndex)
                case .invalid(let status, let reason)?:
                    return .invalid(status: status, reason: reason)
                case .found(let found)?:
                    end = found
                }
                let line = bytes[index..<end]
                let sizeText = line.prefix { $0 != UInt8(ascii: ";") }
                let extensionPart = line.dropFirst(sizeText.count)
                guard !sizeText.isEmpty, sizeText.count <= 15, sizeText.allSatisfy(Self.isHexDigit),
                    let size = Int(String(decoding: sizeText, as: UTF8.self), radix: 16)
                else { return .invalid(status: 400, reason: "a bad chunk size") }
                guard extensionPart.allSatisfy({ HTTPHeadCheck.isTokenByte($0) || $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: "=") })
                else { return .invalid(status: 400, reason: "a chunk extension with characters outside a token") }
                index = end + 2
                if size == 0 {
                    state = .end
                } else {
                    guard body.count + size <= limit else { return .invalid(status: 413, reason: "the body is over \(limit) bytes") }
                    state = .data(remaining: size)
                }
            case .data(let remaining):
                let available = min(remaining, bytes.endIndex - index)
                body.append(contentsOf: bytes[index..<(index + available)])
                index += available
                guard available == remaining else {
                    state = .data(remaining: remaining - available)
                    return .incomplete(consumed: index - bytes.startIndex)
                }
                state = .dataEnd
            case .dataEnd, .end:
                guard bytes.endIndex - index >= 2 else { return .incomplete(consumed: index - bytes.startIndex) }
                guard bytes[index] == UInt8(ascii: "\r"), bytes[index + 1] == UInt8(ascii: "\n") else {
                    if case .end = state {
                        // The last chunk: no trailer fields, just the final CRLF.
                        return .invalid(status: 400, reason: "trailer fields after the last chunk are not accepted")
                    }
                    return .invalid(status: 400, reason: "a chunk's data is not followed by CRLF")
                }
                index += 2
                if case .end = state { return .complete(consumed: index - bytes.startIndex) }
                state = .size
            }
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
