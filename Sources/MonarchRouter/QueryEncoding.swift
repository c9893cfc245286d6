import MonarchWire

extension Array where Element == QueryItem {
    /// The items in the one order that cache keys and upstream URLs both use: by encoded name,
    /// items of one name in the order they came (`?tag=b&tag=a` stays apart from
    /// `?tag=a&tag=b`, as an upstream may tell them apart; `?b=2&a=1` is `?a=1&b=2`). A key
    /// names what the upstream was asked for, so both write the query so.
    public var inKeyOrder: [QueryItem] {
        guard count > 1 else { return self }
        let names = map { PercentEncoding.encode($0.name, keeping: PercentEncoding.isUnreserved) }
        // Already in order, the common case: no copy.
        if names.indices.dropFirst().allSatisfy({ names[$0 - 1] <= names[$0] }) { return self }
        return indices.sorted { (names[$0], $0) < (names[$1], $1) }.map { self[$0] }
    }

    /// The items as a query string without its `?`: `name=value`, or `name` when the value is
    /// nil, joined by `&`, in order, encoded as HTML forms are (`application/x-www-form-urlencoded`,
    /// which is how nearly every origin reads a query): a space is `+`, and every other byte
    /// that is not unreserved (`A-Z a-z 0-9 - . _ ~`) is percent-encoded, `+` as `%2B` — so
    /// `&`, `=` or `#` inside a name or value never change the structure, and two different
    /// lists never give the same text. A query parsed from text (``ResourcePath/init(parsing:)``
    /// reads `+` as a space) is written back with its `+` as given.
    public var encodedQuery: String {
        var text = ""
        appendEncodedQuery(to: &text)
        return text
    }

    /// Appends ``encodedQuery`` to `text`.
    func appendEncodedQuery(to text: inout String) {
        // Room for the text as it is when nothing needs encoding, the common case.
        text.reserveCapacity(text.utf8.count + reduce(count) { $0 + $1.name.utf8.count + ($1.value?.utf8.count ?? 0) + 1 })
        for (index, item) in enumerated() {
            if index > 0 { text.append("&") }
            text.append(Self.formEncoded(item.name))
            if let value = item.value {
                text.append("=")
                text.append(Self.formEncoded(value))
            }
        }
    }

    /// `text` form-encoded: unreserved bytes kept, a space as `+`, every other byte as `%XX`.
    private static func formEncoded(_ text: String) -> String {
        let encoded = PercentEncoding.encode(text, keeping: { PercentEncoding.isUnreserved($0) || $0 == UInt8(ascii: " ") })
        return encoded.utf8.contains(UInt8(ascii: " ")) ? String(encoded.map { $0 == " " ? "+" : $0 }) : encoded
    }
}
