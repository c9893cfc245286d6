/// A request path split at its query, so the part routing reads (the path) can be looked up
/// in the ``RouteCache`` apart from the part that changes from request to request (the query).
///
/// The split is the one ``MonarchRouter/ResourcePath/init(parsing:)`` makes: at the first `?`.
/// A path with a `#` is not split (its fragment comes off first there): it is looked up whole.
struct PathAndQuery {
    /// The text before the `?`; the whole text when there is none, or a `#`.
    let path: String
    /// The text after the `?`; nil when the text was not split.
    let query: Substring?

    /// Splits `text`.
    init(_ text: String) {
        guard let mark = text.utf8.firstIndex(of: UInt8(ascii: "?")), !text.utf8.contains(UInt8(ascii: "#")) else {
            path = text
            query = nil
            return
        }
        path = String(text[..<mark])
        query = text[text.index(after: mark)...]
    }
}
