import MonarchWire

extension ResourcePath {
    /// Parses a request path, or a full http/https URL, once.
    ///
    /// - A leading "/" or a URL prefix (`http://host:port`, `https://…`) is dropped, so
    ///   `/users/1`, `http://example.com/users/1` and `users/1` give the same components.
    ///   Text is a URL only when it starts with `scheme://`; a scheme other than http or https,
    ///   an empty host, user information or a bad port is an `.invalidURL` error. Text starting
    ///   with `//` is a path, not an authority.
    /// - `#fragment` is split off at the first `#`, then `?query` at the first `?`; neither
    ///   ever leaks into a component. Query items are separated by `&` (empty items skipped),
    ///   split at the first `=`, names and values decoded as HTML forms do (a `+` is a space,
    ///   then percent-decoding: `%2B` is a plus), as nearly every origin reads them; the
    ///   upstream URL and the cache key write them back so (``Swift/Array/encodedQuery``).
    /// - Empty components (`a//b`) are skipped; a trailing slash is ignored.
    /// - Each component is percent-decoded exactly once (`%252F` gives `%2F`); `%2F` gives a
    ///   "/" that stays inside its component.
    ///
    /// Errors, checked component by component from the left, then for the query and fragment:
    /// no component at all → `.empty`; a bad escape (`%zz`, `%4`, trailing `%`) or bytes that
    /// are not UTF-8 → `.invalidPercentEncoding`; a NUL → `.nulByte`; `.` or `..` after
    /// decoding → `.dotSegment`.
    public init(parsing text: String) throws(PathError) {
        var rest = Substring(text)
        var fragmentText: Substring?
        if let hash = rest.firstIndex(of: "#") {
            fragmentText = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
        }
        var queryText: Substring?
        if let mark = rest.firstIndex(of: "?") {
            queryText = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        rest = try Self.droppingURLPrefix(rest)

        var components: [String] = []
        for raw in rest.split(separator: "/", omittingEmptySubsequences: true) {
            let position = components.count + 1
            let decoded = try Self.decode(raw, naming: "component \(position)")
            try Self.validate(decoded: decoded, position: position, raw: raw)
            components.append(decoded)
        }
        guard !components.isEmpty else {
            throw PathError(.empty, "the path \(text.debugDescription) has no component")
        }

        let query = try queryText.map { (raw) throws(PathError) in try Self.queryItems(parsing: raw) } ?? []
        let fragment = try fragmentText.map { (raw) throws(PathError) in try Self.decodeNoNUL(raw, naming: "the fragment") }
        self.init(validated: components, query: query, fragment: fragment)
    }

    /// The query items of `text`, the part of a path after its `?` (and before any `#`), parsed
    /// as ``init(parsing:)`` parses them: items separated by `&` (empty ones skipped), split at
    /// the first `=`, names and values form-decoded. A caller that keeps a path's parse may
    /// parse its query alone this way.
    ///
    /// - Throws: `.invalidPercentEncoding` or `.nulByte`, naming the item, as the whole parse
    ///   would.
    public static func queryItems(parsing text: Substring) throws(PathError) -> [QueryItem] {
        var query: [QueryItem] = []
        for raw in text.split(separator: "&", omittingEmptySubsequences: true) {
            let position = query.count + 1
            // Form decoding: `+` is a space (`%2B` a plus, once percent-decoded).
            let raw = raw.contains("+") ? Substring(raw.map { $0 == "+" ? " " : $0 }) : raw
            if let equals = raw.firstIndex(of: "=") {
                let name = try decodeNoNUL(raw[..<equals], naming: "the name of query item \(position)")
                let value = try decodeNoNUL(raw[raw.index(after: equals)...], naming: "the value of query item \(position)")
                query.append(QueryItem(name: name, value: value))
            } else {
                query.append(QueryItem(name: try decodeNoNUL(raw, naming: "the name of query item \(position)"), value: nil))
            }
        }
        return query
    }

    /// Drops `scheme://authority` from the front of `text` when it starts with a scheme and
    /// `://`, checking that the URL is http or https with a host.
    private static func droppingURLPrefix(_ text: Substring) throws(PathError) -> Substring {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return text }
        let scheme = text[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return text }
        let lowered = scheme.lowercased()
        guard lowered == "http" || lowered == "https" else {
            throw PathError(.invalidURL, "the URL scheme \(String(scheme).debugDescription) is not http or https")
        }
        let afterScheme = text[text.index(colon, offsetBy: 3)...]
        let slash = afterScheme.firstIndex(of: "/") ?? afterScheme.endIndex
        let authority = afterScheme[..<slash]
        guard !authority.contains("@") else {
            throw PathError(.invalidURL, "the URL authority \(String(authority).debugDescription) has user information")
        }
        var host = authority
        var port: Substring = ""
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw PathError(.invalidURL, "the URL host \(String(authority).debugDescription) has no closing \"]\"")
            }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let tail = authority[authority.index(after: close)...]
            guard tail.isEmpty || tail.hasPrefix(":") else {
                throw PathError(.invalidURL, "the URL authority \(String(authority).debugDescription) is malformed")
            }
            port = tail.dropFirst()
        } else if let portColon = authority.firstIndex(of: ":") {
            host = authority[..<portColon]
            port = authority[authority.index(after: portColon)...]
        }
        guard !host.isEmpty else {
            throw PathError(.invalidURL, "the URL \(String(text).debugDescription) has no host")
        }
        guard port.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw PathError(.invalidURL, "the URL port \(String(port).debugDescription) is not a number")
        }
        return afterScheme[slash...]
    }

    private static func decode(_ raw: Substring, naming part: @autoclosure () -> String) throws(PathError) -> String {
        do {
            return try PercentEncoding.decode(raw)
        } catch {
            let problem = error == .invalidEscape ? "has an invalid percent escape" : "does not decode to UTF-8"
            throw PathError(.invalidPercentEncoding, "\(part()) (\(String(raw).debugDescription)) \(problem)")
        }
    }

    private static func decodeNoNUL(_ raw: Substring, naming part: @autoclosure () -> String) throws(PathError) -> String {
        let decoded = try decode(raw, naming: part())
        guard !decoded.utf8.contains(0) else {
            throw PathError(.nulByte, "\(part()) (\(String(raw).debugDescription)) contains a NUL byte")
        }
        return decoded
    }
}
