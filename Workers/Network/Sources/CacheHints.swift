/// What an upstream's `Cache-Control` says about keeping its response, in the terms of
/// ``Monarch/Response``: `no-store` or `private` → not cacheable; `no-cache` → kept but stale
/// at once (a TTL of zero: always revalidated); `s-maxage=N` (preferred) or `max-age=N` → a
/// TTL of N seconds; nothing of these → no TTL (the route's applies).
public struct CacheHints: Sendable, Hashable {
    /// Whether caches may keep the response.
    public var cacheable: Bool
    /// How long the response is fresh; nil leaves it to the route.
    public var ttl: Duration?

    /// Creates hints.
    public init(cacheable: Bool = true, ttl: Duration? = nil) {
        self.cacheable = cacheable
        self.ttl = ttl
    }

    /// The hints of a `Cache-Control` value (nil: no header). Directive names are compared
    /// without regard to case; an unparsable age is ignored.
    public init(cacheControl: String?) {
        self.init()
        guard let cacheControl else { return }
        var maxAge: Int?
        var sharedMaxAge: Int?
        var noCache = false
        for directive in Self.directives(cacheControl) {
            switch directive.name {
            case "no-store", "private": cacheable = false
            case "no-cache": noCache = true
            case "max-age": maxAge = directive.value.flatMap(Self.seconds) ?? maxAge
            case "s-maxage": sharedMaxAge = directive.value.flatMap(Self.seconds) ?? sharedMaxAge
            default: break
            }
        }
        if noCache {
            ttl = .zero
        } else if let seconds = sharedMaxAge ?? maxAge {
            ttl = .seconds(seconds)
        }
    }

    /// The directives of a `Cache-Control` value: lowercased names, values unquoted.
    static func directives(_ value: String) -> [(name: String, value: String?)] {
        var result: [(name: String, value: String?)] = []
        var current = ""
        var quoted = false
        func flush() {
            let part = current.trimmingSpaces
            current = ""
            guard !part.isEmpty else { return }
            if let equals = part.firstIndex(of: "=") {
                var argument = String(part[part.index(after: equals)...]).trimmingSpaces
                if argument.count >= 2, argument.hasPrefix("\""), argument.hasSuffix("\"") {
                    argument = String(argument.dropFirst().dropLast())
                }
                result.append((String(part[..<equals]).trimmingSpaces.lowercased(), argument))
            } else {
                result.append((part.lowercased(), nil))
            }
        }
        for character in value {
            if character == "\"" { quoted.toggle() }
            if character == ",", !quoted { flush() } else { current.append(character) }
        }
        flush()
        return result
    }

    /// A delta-seconds value: digits only; very large values are clamped to about 68 years.
    private static func seconds(_ text: String) -> Int? {
        guard !text.isEmpty, text.allSatisfy(\.isASCIIDigit) else { return nil }
        return Int(text) ?? Int(Int32.max)
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
