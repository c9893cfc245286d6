#if canImport(Glibc)
import Glibc
#endif
import TestOrigins

/// An HTTP answer as read off the socket: its status, its head's lines and its body.
struct HTTPAnswer: Sendable, CustomStringConvertible {
    /// Everything the server sent.
    let text: String

    /// The status code; 0 when the text holds no status line.
    var status: Int {
        let line = text.prefix { $0 != "\r" }.split(separator: " ")
        return line.count >= 2 ? Int(line[1]) ?? 0 : 0
    }

    /// The header lines, without the status line.
    var headerLines: [String] {
        guard let end = text.range(of: "\r\n\r\n") else { return [] }
        return text[..<end.lowerBound].components(separatedBy: "\r\n").dropFirst().map { $0 }
    }

    /// The value of the first header `name` (any case).
    func header(_ name: String) -> String? {
        let prefix = name.lowercased() + ":"
        return headerLines.first { $0.lowercased().hasPrefix(prefix) }.map {
            String($0.dropFirst(prefix.count)).trimmingCharacters(in: [" "])
        }
    }

    /// What follows the head.
    var body: String {
        guard let end = text.range(of: "\r\n\r\n") else { return "" }
        return String(text[end.upperBound...])
    }

    var description: String { text }
}

/// One HTTP/1.1 exchange by hand: the request's text is sent as it is, and the answer read
/// until the server closes the connection (send `Connection: close`), within 15 s.
enum HTTPProbe {
    /// Over TCP to 127.0.0.1:`port`, from the loopback address `source`.
    static func exchange(_ request: String, port: UInt16, from source: String = "127.0.0.1") async throws -> HTTPAnswer {
        try await offPool {
            let socket = try RawSocket(tcpPort: port, from: source)
            return readAnswer(socket, after: request)
        }
    }

    /// Over the Unix socket at `path`.
    static func exchange(_ request: String, unixPath path: String) async throws -> HTTPAnswer {
        try await offPool {
            let socket = try RawSocket(path: path)
            return readAnswer(socket, after: request)
        }
    }

    /// `METHOD PATH HTTP/1.1` with `Host`, `headers` and `Connection: close`.
    static func request(_ method: String, _ path: String, headers: [String] = []) -> String {
        ([ "\(method) \(path) HTTP/1.1", "Host: monarch.test"] + headers + ["Connection: close", "", ""]).joined(separator: "\r\n")
    }

    /// The port of an `http://127.0.0.1:PORT/...` URL; 0 when it has none.
    static func port(of url: String) -> UInt16 {
        let rest = url.drop { $0 != ":" }.dropFirst().drop { $0 != ":" }.dropFirst()
        return UInt16(rest.prefix { $0.isNumber }) ?? 0
    }

    private static func readAnswer(_ socket: RawSocket, after request: String) -> HTTPAnswer {
        socket.write(Array(request.utf8))
        var all: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket.fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            all += buffer[..<count]
        }
        return HTTPAnswer(text: String(decoding: all, as: UTF8.self))
    }
}
