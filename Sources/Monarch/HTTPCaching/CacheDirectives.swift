/// The directives of a `Cache-Control`-like header (RFC 9111 §5.2), read the way a shared
/// cache must: names without regard to case, quoted strings kept whole (a comma or a
/// `max-age=` inside quotes is no directive), and delta-seconds strict (digits only, leading
/// zeros allowed, very large values clamped to 2^31).
public struct CacheDirectives: Sendable, Equatable {
    /// One directive: its lowercased name and its value as written (quotes removed from a
    /// quoted string), nil when it has none.
    public struct Directive: Sendable, Equatable {
        /// The name, lowercase.
        public var name: String
        /// The value, unquoted; nil for a bare name.
        public var value: String?
    }

    /// The directives in the order written.
    public private(set) var items: [Directive]

    /// No directives.
    public init() { items = [] }

    /// The directives of `value` (several header lines joined with commas read as one list).
    public init(_ value: String?) {
        items = []
        guard let value else { return }
        var name = ""
        var argument: String?
        var quoted = false
        var escaped = false
        var wasQuoted = false
        func flush() {
            // No space may stand beside `=` (`max-age =3600` and `max-age= 3600` are no
            // max-age); spaces around a whole directive are the list's.
            let leading = String(name.drop { $0 == " " || $0 == "\t" })
            let trimmedName = (argument == nil ? leading.trimmingHTTPSpaces : leading).asciiLowercased
            if !trimmedName.isEmpty {
                let text = argument.map { wasQuoted ? $0 : String($0.reversed().drop { $0 == " " || $0 == "\t" }.reversed()) }
                items.append(Directive(name: trimmedName, value: text))
            }
            name = ""
            argument = nil
            wasQuoted = false
        }
        for character in value {
            if quoted {
                if escaped {
                    argument?.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    quoted = false
                } else {
                    argument?.append(character)
                }
                continue
            }
            switch character {
            case ",":
                flush()
            case "=" where argument == nil:
                argument = ""
            case "\"" where argument != nil && argument!.isEmpty && !wasQuoted:
                quoted = true
                wasQuoted = true
            default:
                if argument != nil { argument!.append(character) } else { name.append(character) }
            }
        }
        flush()
    }

    /// The directives of a Structured Field dictionary such as `CDN-Cache-Control` (RFC 9213,
    /// RFC 8941), or nil when `value` is not a valid one (such a header is ignored whole): keys
    /// in lowercase, integer, token, string or boolean values, parameters ignored, and
    /// `max-age`, `s-maxage` and the stale windows integers.
    public init?(structuredField value: String) {
        var items: [Directive] = []
        var rest = Substring(value)
        func skipSpaces() { rest = rest.drop { $0 == " " || $0 == "\t" } }
        skipSpaces()
        while !rest.isEmpty {
            let key = rest.prefix { $0.isStructuredKeyCharacter }
            guard let first = key.first, first == "*" || ("a"..."z").contains(first) else { return nil }
            rest = rest.dropFirst(key.count)
            var item = Directive(name: String(key), value: nil)
            if rest.first == "=" {
                rest = rest.dropFirst()
                guard let (parsed, after) = Self.bareItem(rest) else { return nil }
                item.value = parsed
                rest = after
            }
            // Parameters (`;name=value`) are read and dropped.
            while rest.first == ";" {
                rest = rest.dropFirst()
                skipSpaces()
                let name = rest.prefix { $0.isStructuredKeyCharacter }
                guard !name.isEmpty else { return nil }
                rest = rest.dropFirst(name.count)
                if rest.first == "=" {
                    guard let (_, after) = Self.bareItem(rest.dropFirst()) else { return nil }
                    rest = after
                }
            }
            if Self.integerDirectives.contains(item.name), let value = item.value, Int64(value) == nil { return nil }
            items.append(item)
            skipSpaces()
            guard !rest.isEmpty else { break }
            guard rest.first == "," else { return nil }
            rest = rest.dropFirst()
            skipSpaces()
            guard !rest.isEmpty else { return nil }
        }
        self.items = items
    }

    /// The directives whose values a Structured Field must give as integers.
    private static let integerDirectives: Set<String> = ["max-age", "s-maxage", "stale-while-revalidate", "stale-if-error"]

    /// One bare item at the start of `text` (integer, token, string or boolean) as text, and
    /// what follows it; nil when there is none. A string keeps its quotes, so that it never
    /// reads as an integer.
    private static func bareItem(_ text: Substring) -> (String, Substring)? {
        guard let first = text.first else { return nil }
        if first == "-" || first.isASCIIDigitCharacter {
            let number = text.prefix { $0 == "-" || $0.isASCIIDigitCharacter || $0 == "." }
            guard Double(number) != nil else { return nil }
            return (String(number), text.dropFirst(number.count))
        }
        if first == "\"" {
            var index = text.index(after: text.startIndex)
            var escaped = false
            while index < text.endIndex {
                let character = text[index]
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    let end = text.index(after: index)
                    return (String(text[..<end]), text[end...])
                }
                index = text.index(after: index)
            }
            return nil
        }
        if first == "?" {
            let value = text.dropFirst().prefix(1)
            guard value == "0" || value == "1" else { return nil }
            return ("?" + value, text.dropFirst(2))
        }
        guard first == "*" || first.isLetter && first.isASCII else { return nil }
        let token = text.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || "!#$%&'*+-.^_`|~:/".contains($0)) }
        return (String(token), text.dropFirst(token.count))
    }

    /// Whether the directive `name` (lowercase) is present.
    public func has(_ name: String) -> Bool {
        items.contains { $0.name == name }
    }

    /// The delta-seconds value of `name` (lowercase): nil when absent or not a valid number
    /// (`3600.0`, `'3600'`, ` 3600`); when given more than once with different values, 0 (RFC
    /// 9111 §4.2.1 lets a cache take such a response as stale).
    public func seconds(_ name: String) -> Int64? {
        var found: Int64?
        for item in items where item.name == name {
            guard let value = item.value.flatMap(Self.deltaSeconds) else { continue }
            if let earlier = found, earlier != value { return 0 }
            found = value
        }
        return found
    }

    /// Whether `name` is present with or without a valid value (as `max-stale` may be).
    public func hasBareOrSeconds(_ name: String) -> (present: Bool, seconds: Int64?) {
        (has(name), seconds(name))
    }

    /// A delta-seconds value: digits only; values past 2^31 are 2^31 (RFC 9111 §1.2.2).
    static func deltaSeconds(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        let digits = text.drop { $0 == "0" }
        guard digits.count <= 10 else { return 1 << 31 }
        return min(Int64(digits) ?? 0, 1 << 31)
    }
}

extension Character {
    /// A character of a Structured Field key: lowercase letters, digits, `_`, `-`, `.`, `*`.
    fileprivate var isStructuredKeyCharacter: Bool {
        ("a"..."z").contains(self) || isASCIIDigitCharacter || self == "_" || self == "-" || self == "." || self == "*"
    }

    /// An ASCII digit.
    fileprivate var isASCIIDigitCharacter: Bool { ("0"..."9").contains(self) }
}

extension String {
    /// The string without spaces and tabs at either end (HTTP's optional whitespace).
    package var trimmingHTTPSpaces: String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
