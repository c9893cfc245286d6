/// Where a listener listens or a connection connects: a Unix-domain socket path or a TCP
/// host and port. Written `unix:PATH` or `tcp:HOST:PORT` (`tcp:[::1]:7400` for IPv6), the
/// same forms as the configuration file.
public enum SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// A Unix-domain stream socket at `path`.
    case unix(path: String)
    /// A TCP socket; `host` is a numeric IPv4 or IPv6 address, or `localhost`.
    case tcp(host: String, port: UInt16)

    /// Parses `unix:PATH` or `tcp:HOST:PORT`.
    ///
    /// - Throws: ``SocketAddressError`` naming what is wrong with `text`.
    public init(parsing text: String) throws(SocketAddressError) {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard !path.isEmpty else { throw SocketAddressError(text: text, problem: "the socket path is empty") }
            guard !path.utf8.contains(0) else { throw SocketAddressError(text: text, problem: "the path holds a NUL byte") }
            // sun_path holds 108 bytes including the terminating NUL.
            guard path.utf8.count <= 107 else {
                throw SocketAddressError(text: text, problem: "the socket path is longer than 107 bytes")
            }
            self = .unix(path: path)
        } else if text.hasPrefix("tcp:") {
            let rest = text.dropFirst(4)
            let host: Substring
            let portText: Substring
            if rest.hasPrefix("[") {
                guard let close = rest.firstIndex(of: "]"), rest[rest.index(after: close)...].hasPrefix(":") else {
                    throw SocketAddressError(text: text, problem: "expected tcp:[IPV6]:PORT")
                }
                host = rest[rest.index(after: rest.startIndex)..<close]
                portText = rest[rest.index(close, offsetBy: 2)...]
            } else {
                guard let colon = rest.lastIndex(of: ":") else {
                    throw SocketAddressError(text: text, problem: "expected tcp:HOST:PORT")
                }
                host = rest[..<colon]
                portText = rest[rest.index(after: colon)...]
            }
            guard !host.isEmpty else { throw SocketAddressError(text: text, problem: "the host is empty") }
            guard let port = UInt16(portText) else {
                throw SocketAddressError(text: text, problem: "the port \"\(portText)\" is not a number in 0...65535")
            }
            self = .tcp(host: String(host), port: port)
        } else {
            throw SocketAddressError(text: text, problem: "expected unix:PATH or tcp:HOST:PORT")
        }
    }

    /// The address in its `unix:PATH` / `tcp:HOST:PORT` form.
    public var description: String {
        switch self {
        case .unix(let path): "unix:\(path)"
        case .tcp(let host, let port): host.contains(":") ? "tcp:[\(host)]:\(port)" : "tcp:\(host):\(port)"
        }
    }
}

/// A socket address that could not be parsed: the text and what is wrong with it.
public struct SocketAddressError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text that was parsed.
    public let text: String
    /// What is wrong with it.
    public let problem: String

    public var description: String { "invalid address \"\(text)\": \(problem)" }
}
