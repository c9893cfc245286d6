import MonarchWire

/// The identity of a read: method, domain, canonical path and sorted query. Identical reads in
/// flight share one trip down the chain, and caches store responses under this key.
enum RequestKey {
    /// The key, such as `GET static hello.txt?a=1&b=2` (query items sorted by name, then value;
    /// names and values percent-encoded so that separators inside them cannot collide).
    static func make(method: String, domain: String, encodedPath: String, query: [QueryItem]) -> String {
        var key = "\(method) \(domain) \(encodedPath)"
        let items = query.sorted { ($0.name, $0.value ?? "") < ($1.name, $1.value ?? "") }
        if !items.isEmpty {
            key += "?" + items.map { item in
                let name = escape(item.name)
                return item.value.map { "\(name)=\(escape($0))" } ?? name
            }.joined(separator: "&")
        }
        return key
    }

    private static func escape(_ text: String) -> String {
        var escaped = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "="), UInt8(ascii: " "), 0..<0x20, 0x7F...:
                escaped += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            default:
                escaped.unicodeScalars.append(UnicodeScalar(byte))
            }
        }
        return escaped
    }
}
