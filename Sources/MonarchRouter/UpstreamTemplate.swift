import MonarchWire

/// An upstream URL template such as `http://127.0.0.1:8080/users/:id` or `http://h:1/assets/...`.
///
/// The template is `scheme://host[:port]`, then an optional path whose "/"-separated segments
/// are each a literal (copied as written), `:name` (a parameter of the route's pattern) or
/// `...` (the route's remainder, last segment only), then an optional literal `?query` that is
/// kept in front of the request's query items. A parameter fills a whole segment only.
public struct UpstreamTemplate: Sendable, CustomStringConvertible {
    private enum Piece: Sendable {
        case literal(String)
        case parameter(String)
        case remainder
    }

    /// The scheme, lower-cased: `http` or `https`.
    public let scheme: String
    /// The host, lower-cased, without the brackets of an IPv6 literal (`::1` for `[::1]`).
    public let host: String
    /// The port written in the template, or nil when it has none.
    public let port: Int?
    /// The template as written.
    public let description: String

    /// `scheme://authority` as written, with the scheme lower-cased.
    private let origin: String
    /// The path segments after the authority; empty when the template has no path.
    private let pieces: [Piece]
    /// The literal query written in the template, without its "?"; nil when none or empty.
    private let fixedQuery: String?

    /// Parses `text` for the routes of `pattern`.
    ///
    /// Throws a `RoutePatternError` when: the scheme is not http or https; the host is missing;
    /// the port is not a number from 1 to 65535; the authority has user information; the
    /// template has a `#fragment`; a `:name` is not a parameter of `pattern` (or is `:_`, or is
    /// not a valid name); `...` appears although `pattern` has no remainder, or not as the last
    /// path segment.
    public init(_ text: String, for pattern: RoutePattern) throws(RoutePatternError) {
        func failure(_ problem: String) -> RoutePatternError {
            RoutePatternError("upstream \(text.debugDescription) for route \(pattern.description.debugDescription): \(problem)")
        }
        guard !text.contains("#") else { throw failure("a fragment is never sent upstream") }
        guard let separator = text.firstRange(of: "://") else { throw failure("it is not a URL (scheme://host…)") }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw failure("the scheme must be http or https, not \(scheme.debugDescription)")
        }
        let afterScheme = text[separator.upperBound...]
        let authorityEnd = afterScheme.firstIndex { $0 == "/" || $0 == "?" } ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        guard !authority.contains("@") else { throw failure("user information in the URL is not supported") }

        var host = authority
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw failure("the IPv6 host has no closing \"]\"") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let tail = authority[authority.index(after: close)...]
            guard tail.isEmpty || tail.hasPrefix(":") else { throw failure("the authority is malformed") }
            portText = tail.isEmpty ? nil : tail.dropFirst()
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        guard !host.isEmpty else { throw failure("the host is missing") }
        var port: Int?
        if let portText {
            guard portText.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(portText), (1...65535).contains(value)
            else { throw failure("the port \(String(portText).debugDescription) is not a number from 1 to 65535") }
            port = value
        }

        var rest = afterScheme[authorityEnd...]
        var fixedQuery: String?
        if let mark = rest.firstIndex(of: "?") {
            let literal = rest[rest.index(after: mark)...]
            fixedQuery = literal.isEmpty ? nil : String(literal)
            rest = rest[..<mark]
        }
        var pieces: [Piece] = []
        if !rest.isEmpty {
            let segments = rest.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
            for (position, segment) in segments.enumerated() {
                if segment == "..." {
                    guard pattern.hasRemainder else { throw failure("\"...\" needs a route pattern that ends with \"...\"") }
                    guard position == segments.count - 1 else { throw failure("\"...\" must be the last path segment") }
                    pieces.append(.remainder)
                } else if segment.hasPrefix(":") {
                    let name = String(segment.dropFirst())
                    guard name != "_" else { throw failure("\":_\" binds nothing to fill in") }
                    guard RoutePattern.isValidParameterName(name) else {
                        throw failure("\(String(segment).debugDescription) is not a valid parameter name")
                    }
                    guard pattern.parameterNames.contains(name) else {
                        throw failure("\(String(segment).debugDescription) is not a parameter of the route")
                    }
                    pieces.append(.parameter(name))
                } else {
                    pieces.append(.literal(String(segment)))
                }
            }
        }

        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port
        self.description = text
        self.origin = "\(scheme)://\(authority)"
        self.pieces = pieces
        self.fixedQuery = fixedQuery
    }

    /// The port to connect to: the template's, or 80 for http and 443 for https.
    public var effectivePort: Int { port ?? (scheme == "https" ? 443 : 80) }

    /// The upstream URL for one request.
    ///
    /// Each `:name` segment becomes the value of `parameters[name]` (empty if absent, which a
    /// match of the template's pattern never leaves) with every byte that is not unreserved
    /// (`A-Z a-z 0-9 - . _ ~`) percent-encoded, so "/", "?", "#", space and non-ASCII never
    /// change the URL's structure. `...` becomes the remainder components, each encoded the
    /// same way, joined by "/". Literal segments and the template's own query are copied as
    /// written. The query items follow as `name=value`, or just `name` when the value is nil,
    /// form-encoded (``Swift/Array/encodedQuery``: a space is `+`, a `+` is `%2B`) and joined by
    /// "&", after the template's query if it has one — in the order the cache key has them
    /// (``Swift/Array/inKeyOrder``: by name, items of one name as they came), so that the key
    /// names what the upstream was asked for.
    ///
    /// - Throws: ``PathError`` `separatorInComponent` when a value that fills a path segment
    ///   (a parameter, or a remainder component) holds a `/` or `\`: encoded, it would still
    ///   reach origins that decode `%2F` or `%5C` into separators, and `..%2F..%2F.env` would
    ///   climb out of the template's path. (`.` and `..` components never get this far: the
    ///   path parser refuses them.)
    public func url(parameters: [String: String], remainder: [String], query: [QueryItem]) throws(PathError) -> String {
        var url = origin
        url.reserveCapacity(Self.expectedLength)
        for piece in pieces {
            url.append("/")
            switch piece {
            case .literal(let text):
                url.append(text)
            case .parameter(let name):
                let value = parameters[name] ?? ""
                try Self.checkSegment(value, naming: "the parameter \(name)")
                url.append(Self.encode(value))
            case .remainder:
                for (position, component) in remainder.enumerated() {
                    try Self.checkSegment(component, naming: "a component")
                    if position > 0 { url.append("/") }
                    url.append(Self.encode(component))
                }
            }
        }
        if let fixedQuery {
            url.append("?")
            url.append(fixedQuery)
        }
        if !query.isEmpty {
            url.append(fixedQuery == nil ? "?" : "&")
            query.inKeyOrder.appendEncodedQuery(to: &url)
        }
        return url
    }

    /// Room made for a URL before it is written: most fit, so it is written without growing.
    private static let expectedLength = 128

    private static func checkSegment(_ value: String, naming what: @autoclosure () -> String) throws(PathError) {
        guard value.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") }) else { return }
        throw PathError(
            .separatorInComponent,
            "\(what()) (\(value.debugDescription)) holds a / or \\, which would change the upstream's path")
    }

    private static func encode(_ text: String) -> String {
        PercentEncoding.encode(text, keeping: PercentEncoding.isUnreserved)
    }
}
