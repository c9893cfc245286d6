/// How a request may use cached responses (Protocols/README.md, section 8).
public enum CachePolicy: String, Codable, Sendable, CaseIterable {
    /// Answer from the cache when it has the entry; fetch only on a miss.
    case cacheFirst
    /// Fetch; answer from the cache (even stale) only when the fetch fails.
    case networkFirst
    /// Answer from the cache at once, even stale, and refresh the entry in the background.
    case cacheThenRefresh
    /// Neither read nor write the cache.
    case noCache
}

/// One query item of a request, in order; the value may be absent (`?flag`).
public struct QueryItem: Codable, Sendable, Hashable {
    /// The item's name.
    public var name: String
    /// The item's value, if it has one.
    public var value: String?

    /// Creates a query item.
    public init(name: String, value: String?) {
        self.name = name
        self.value = value
    }
}

extension QueryItem: WireObject {
    static var placeholder: QueryItem { QueryItem(name: "", value: nil) }

    static func fields<Visitor: FieldVisitor>(_ visitor: inout Visitor, _ item: inout QueryItem) throws(Visitor.Failure) {
        try visitor.required("name", &item.name, Field.Text.self)
        try visitor.optional("value", &item.value, Field.Text.self)
    }
}
