/// One header line of an HTTP message: its name as sent, and its value without the spaces
/// around it.
public struct HTTPHeader: Sendable, Equatable {
    /// The name as sent (compare names case-insensitively).
    public var name: String
    /// The value, leading and trailing spaces and tabs removed.
    public var value: String

    /// A header `name: value`.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Whether the header is called `other`, compared as HTTP compares names (ASCII letters in
    /// any case).
    public func isNamed(_ other: String) -> Bool {
        var mine = name.utf8.makeIterator()
        for byte in other.utf8 {
            guard let own = mine.next(), own.asciiLowercased == byte.asciiLowercased else { return false }
        }
        return mine.next() == nil
    }
}

extension UInt8 {
    /// The byte, an ASCII capital letter made small (any other byte as it is).
    var asciiLowercased: UInt8 {
        (65...90).contains(self) ? self | 0x20 : self
    }
}

/// An HTTP/1.x request as it arrived, whole: its head and its body (de-chunked).
public struct HTTPRequest: Sendable, Equatable {
    /// The method (`GET`, `POST`, …), as sent.
    public var method: String
    /// The request target (`/a/b?c=d`, or an absolute URL), as sent.
    public var target: String
    /// The minor version of HTTP/1: 0 or 1.
    public var minorVersion: Int
    /// The header lines, in order.
    public var headers: [HTTPHeader]
    /// The body; empty when there is none.
    public var body: [UInt8]
    /// Whether the connection stays open after the answer (HTTP/1.1 unless `Connection:
    /// close`; HTTP/1.0 only with `Connection: keep-alive`).
    public var keepAlive: Bool
    /// Whether the client sent `Expect: 100-continue` (and waits for a `100 Continue` before
    /// its body, or for a while).
    public var expectsContinue: Bool

    /// A request.
    public init(
        method: String, target: String, minorVersion: Int = 1, headers: [HTTPHeader] = [], body: [UInt8] = [],
        keepAlive: Bool = true, expectsContinue: Bool = false
    ) {
        self.method = method
        self.target = target
        self.minorVersion = minorVersion
        self.headers = headers
        self.body = body
        self.keepAlive = keepAlive
        self.expectsContinue = expectsContinue
    }

    /// The values of the headers called `name` (any case), in order.
    public func values(of name: String) -> [String] {
        headers.filter { $0.isNamed(name) }.map(\.value)
    }

    /// The first value of the header `name` (any case).
    public func value(of name: String) -> String? {
        headers.first { $0.isNamed(name) }?.value
    }
}

/// Bounds on what one request may hold; what goes over one is refused with its status.
public struct HTTPLimits: Sendable, Equatable {
    /// The longest request line, in bytes (over it: 414).
    public var requestLineBytes = 8000
    /// The most bytes of header lines (over it: 431).
    public var headerBlockBytes = 32 << 10
    /// The most header lines (over it: 431).
    public var headerCount = 100
    /// The largest body, in bytes (over it: 413), of a request for which the parser's
    /// ``HTTPRequestParser/bodyLimit`` says nothing else.
    public var bodyBytes = 1 << 20

    /// The standard bounds (those of the anchors: nginx's and Node's).
    public init() {}
}

/// Why a request is refused: the status to answer it with (before closing the connection)
/// and what was wrong.
public struct HTTPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 400, 413, 414, 417, 431, 501 or 505.
    public var status: Int
    /// What was wrong, for the answer's body and the log.
    public var reason: String

    /// An error answered with `status`.
    public init(status: Int, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    public var description: String { "\(status): \(reason)" }
}
