/// The host a route answers for (its `host:` key): one DNS name, such as `example.com`, or
/// every name below one, such as `*.example.com`.
///
/// Promises:
/// - a name is lowercase ASCII letters, digits and hyphens in dot-separated labels of 1 to 63
///   characters, none starting or ending with a hyphen, 253 characters in all at most, without
///   a trailing dot or a port (request hosts are compared lowercased, port and trailing dot
///   removed, so nothing else could ever match);
/// - `*.NAME` matches every host that ends with `.NAME` after at least one more label
///   (`a.example.com`, `a.b.example.com`), never `NAME` itself (nginx's reading of a leading
///   wildcard);
/// - ``matches(_:)`` compares bytes: it expects a host already lowercased and stripped.
public struct HostPattern: Sendable, Hashable, CustomStringConvertible {
    /// The pattern as written: `example.com`, `*.example.com`.
    public let description: String
    /// Whether it is `*.NAME`.
    public let isWildcard: Bool
    /// The labels of the name (after `*.` for a wildcard): 2 for `example.com`.
    public let labelCount: Int

    /// Parses `text`.
    ///
    /// - Throws: ``HostPatternError`` saying what is wrong: empty, uppercase, a port, a
    ///   trailing dot, a character other than a letter, digit, hyphen or dot, an empty or
    ///   over-long label, a label starting or ending with a hyphen, over 253 characters, or a
    ///   `*` other than a leading `*.`.
    public init(_ text: String) throws(HostPatternError) {
        var name = Substring(text)
        isWildcard = name.hasPrefix("*.")
        if isWildcard { name = name.dropFirst(2) }
        if let problem = Self.problem(withName: name) {
            throw HostPatternError("host \(text.debugDescription) \(problem)")
        }
        description = text
        labelCount = name.utf8.count { $0 == UInt8(ascii: ".") } + 1
    }

    /// Whether a request for `host` (lowercase, without port or trailing dot) is for this pattern.
    public func matches(_ host: String) -> Bool {
        guard isWildcard else { return host.utf8.elementsEqual(description.utf8) }
        // The suffix is the pattern without its `*`: `.example.com`.
        let suffix = description.utf8.dropFirst()
        return host.utf8.count > suffix.count && host.utf8.suffix(suffix.count).elementsEqual(suffix)
    }

    /// What is wrong with the DNS name `name`, or nil when nothing is.
    private static func problem(withName name: Substring) -> String? {
        guard !name.isEmpty else { return "is empty; write a DNS name such as example.com, or *.example.com" }
        if name.contains(":") { return "has a port; write the name alone (the port is not compared)" }
        if name.hasSuffix(".") { return "ends with a dot; write it without" }
        if name.contains("*") { return "has a * that is not a leading \"*.\" (write *.example.com for the names below example.com)" }
        if name.contains(where: \.isUppercase) {
            return "has uppercase letters; write it in lowercase, \(name.lowercased().debugDescription) (hosts compare without case)"
        }
        guard name.utf8.count <= 253 else { return "is \(name.utf8.count) characters; a DNS name has at most 253" }
        for label in name.split(separator: ".", omittingEmptySubsequences: false) {
            guard !label.isEmpty else { return "has an empty label (two dots in a row, or a leading dot)" }
            guard label.utf8.count <= 63 else { return "has a label of \(label.utf8.count) characters; the most is 63" }
            guard label.utf8.allSatisfy(isNameByte) else {
                return "has a character other than a lowercase letter, a digit, a hyphen or a dot"
            }
            if label.hasPrefix("-") || label.hasSuffix("-") { return "has a label starting or ending with a hyphen" }
        }
        return nil
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || byte == UInt8(ascii: "-")
    }
}

/// Why a text is not a ``HostPattern``.
public struct HostPatternError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, naming the text: `host "Example.com" has uppercase letters; …`.
    public let message: String

    /// An error saying `message`.
    public init(_ message: String) {
        self.message = message
    }

    /// ``message``.
    public var description: String { message }
}
