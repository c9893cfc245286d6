import MonarchWire

extension Array where Element == QueryItem {
    /// The items as a query string without its `?`: `name=value`, or `name` when the value is
    /// nil, joined by `&`, in order, with every byte that is not unreserved
    /// (`A-Z a-z 0-9 - . _ ~`) percent-encoded — so `&`, `=` or `#` inside a name or value never
    /// change the structure, and two different lists never give the same text.
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
            text.append(PercentEncoding.encode(item.name, keeping: PercentEncoding.isUnreserved))
            if let value = item.value {
                text.append("=")
                text.append(PercentEncoding.encode(value, keeping: PercentEncoding.isUnreserved))
            }
        }
    }
}
