import MonarchWire

/// A request path parsed once: decoded components, query items, fragment.
///
/// Every component is non-empty, percent-decoded exactly once, valid UTF-8, free of NUL and
/// never `.` or `..`; there is at least one component. Routing, cache keys and upstream URLs
/// all work from this one parse, so no later step decodes a component again. (The properties
/// are settable for convenience; assigning them directly skips that validation, so build
/// changed paths with `init(components:query:fragment:)`.)
///
/// Equality and hashing compare the UTF-8 bytes of components, query items and fragment, with
/// no Unicode normalisation: two paths are equal exactly when their `encoded` forms, queries and
/// fragments are equal.
public struct ResourcePath: Sendable, Hashable, CustomStringConvertible {
    /// The path's components, each percent-decoded exactly once. A decoded `/` (from `%2F`)
    /// stays inside its component.
    public var components: [String]
    /// The query items, names and values percent-decoded, in order, duplicates kept;
    /// `?flag` gives a value of nil, `?flag=` an empty value. A `+` is a literal plus.
    public var query: [QueryItem]
    /// The fragment after `#`, percent-decoded, or nil when there is no `#`.
    public var fragment: String?

    /// Creates a path from components that are already decoded, validating them as parsing
    /// does: there must be at least one, and none may be empty, `.`, `..` or contain NUL.
    /// Query items and fragment are taken as they are.
    public init(components: [String], query: [QueryItem] = [], fragment: String? = nil) throws(PathError) {
        guard !components.isEmpty else { throw PathError(.empty, "the path has no component") }
        for (position, component) in components.enumerated() {
            try Self.validate(decoded: component, position: position + 1, raw: component)
        }
        self.components = components
        self.query = query
        self.fragment = fragment
    }

    /// Creates a path from parts already validated by the parser.
    init(validated components: [String], query: [QueryItem], fragment: String?) {
        self.components = components
        self.query = query
        self.fragment = fragment
    }

    /// Canonical relative form: components percent-encoded (a "/" inside a component stays
    /// %2F), joined by "/", no leading "/", no query, no fragment. Parsing `encoded` gives back
    /// the same components.
    ///
    /// A component keeps the characters RFC 3986 allows in a path segment unescaped (letters,
    /// digits, `-._~!$&'()*+,;=:@`); every other byte of its UTF-8 is written `%XX` with
    /// upper-case hex digits.
    public var encoded: String {
        components.lazy
            .map { PercentEncoding.encode($0, keeping: PercentEncoding.isPathSegmentCharacter) }
            .joined(separator: "/")
    }

    /// The canonical relative form, `encoded`.
    public var description: String { encoded }

    /// Checks one decoded component; `position` counts from 1 and `raw` is the text as written,
    /// both for the error message.
    static func validate(decoded: String, position: Int, raw: some StringProtocol) throws(PathError) {
        // Written out only for an error: a valid component costs no string.
        var shown: String { String(raw).debugDescription }
        if decoded.isEmpty {
            throw PathError(.empty, "component \(position) is empty")
        }
        if decoded == "." || decoded == ".." {
            throw PathError(.dotSegment, "component \(position) (\(shown)) is a dot segment")
        }
        if decoded.utf8.contains(0) {
            throw PathError(.nulByte, "component \(position) (\(shown)) contains a NUL byte")
        }
    }

    /// True when components, query items and fragment have the same UTF-8 bytes, in order.
    public static func == (lhs: ResourcePath, rhs: ResourcePath) -> Bool {
        lhs.components.elementsEqual(rhs.components, by: sameBytes)
            && lhs.query.elementsEqual(rhs.query) { sameBytes($0.name, $1.name) && sameBytes($0.value, $1.value) }
            && sameBytes(lhs.fragment, rhs.fragment)
    }

    /// Hashes the UTF-8 bytes of components, query items and fragment, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(components.count)
        for component in components { hashBytes(component, into: &hasher) }
        hasher.combine(query.count)
        for item in query {
            hashBytes(item.name, into: &hasher)
            hashBytes(item.value, into: &hasher)
        }
        hashBytes(fragment, into: &hasher)
    }
}

private func sameBytes(_ lhs: String?, _ rhs: String?) -> Bool {
    switch (lhs, rhs) {
    case (nil, nil): return true
    case (let lhs?, let rhs?): return lhs.utf8.elementsEqual(rhs.utf8)
    default: return false
    }
}

private func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
    lhs.utf8.elementsEqual(rhs.utf8)
}

private func hashBytes(_ text: String?, into hasher: inout Hasher) {
    guard let text else {
        hasher.combine(false)
        return
    }
    hasher.combine(true)
    hasher.combine(text.utf8.count)
    for byte in text.utf8 { hasher.combine(byte) }
}
