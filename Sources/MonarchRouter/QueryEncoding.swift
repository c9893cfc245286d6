import MonarchWire

extension Array where Element == QueryItem {
    /// The items as a query string without its `?`: `name=value`, or `name` when the value is
    /// nil, joined by `&`, in order, with every byte that is not unreserved
    /// (`A-Z a-z 0-9 - . _ ~`) percent-encoded — so `&`, `=` or `#` inside a name or value never
    /// change the structure, and two different lists never give the same text.
    public var encodedQuery: String {
        map { item in
            let name = PercentEncoding.encode(item.name, keeping: PercentEncoding.isUnreserved)
            return item.value.map { name + "=" + PercentEncoding.encode($0, keeping: PercentEncoding.isUnreserved) } ?? name
        }.joined(separator: "&")
    }
}
