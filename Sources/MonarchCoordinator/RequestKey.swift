import MonarchRouter
import MonarchWire

/// The identity of a read: method, domain, canonical path and query. Caches store responses
/// under this key, and identical reads in flight share one trip down the chain.
enum RequestKey {
    /// The key, such as `GET static hello.txt?a=1&b=2`: query items encoded (so separators
    /// inside them cannot collide), then ordered by name; items with the same name keep their
    /// order (`?tag=b&tag=a` and `?tag=a&tag=b` reach an upstream as different URLs, so they
    /// are different keys), while the order of different names does not matter.
    static func make(method: String, domain: String, encodedPath: String, query: [QueryItem]) -> String {
        let key = "\(method) \(domain) \(encodedPath)"
        guard !query.isEmpty else { return key }
        let encoded = query.enumerated().map { (position: $0.offset, name: [QueryItem(name: $0.element.name, value: nil)].encodedQuery, item: [$0.element].encodedQuery) }
        let ordered = encoded.sorted { ($0.name, $0.position) < ($1.name, $1.position) }
        return key + "?" + ordered.map(\.item).joined(separator: "&")
    }
}
