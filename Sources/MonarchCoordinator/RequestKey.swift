import MonarchRouter
import MonarchWire

/// The identity of a read: method, domain, canonical path and sorted query. Caches store
/// responses under this key, and identical reads in flight share one trip down the chain.
enum RequestKey {
    /// The key, such as `GET static hello.txt?a=1&b=2`: query items encoded (so separators
    /// inside them cannot collide), then sorted.
    static func make(method: String, domain: String, encodedPath: String, query: [QueryItem]) -> String {
        let key = "\(method) \(domain) \(encodedPath)"
        guard !query.isEmpty else { return key }
        return key + "?" + query.map { [$0].encodedQuery }.sorted().joined(separator: "&")
    }
}
