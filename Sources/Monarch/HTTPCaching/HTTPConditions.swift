/// A client's conditional request (RFC 9110 §13) judged against the response a cache would
/// send: whether a `GET` or `HEAD` gets `304 Not Modified` instead, and what that 304 carries.
public enum HTTPConditions {
    /// Whether a request with `requestHeaders` is answered `304 Not Modified` in place of a
    /// `200` with `responseHeaders`: its `If-None-Match` names the response's entity tag (weak
    /// comparison, or `*`), or, without an `If-None-Match`, its `If-Modified-Since` is a valid
    /// date no earlier than the response's `Last-Modified`.
    public static func isNotModified(requestHeaders: [String: String], responseHeaders: [String: String], status: Int) -> Bool {
        guard status == 200 else { return false }
        if let noneMatch = HTTPCacheRules.value("if-none-match", in: requestHeaders) {
            if noneMatch.trimmingHTTPSpaces == "*" { return true }
            guard let etag = HTTPCacheRules.value("etag", in: responseHeaders) else { return false }
            let current = opaqueTag(etag)
            return entityTags(noneMatch).contains { opaqueTag($0) == current }
        }
        guard let since = HTTPCacheRules.value("if-modified-since", in: requestHeaders).flatMap(HTTPDate.seconds),
            let modified = HTTPCacheRules.value("last-modified", in: responseHeaders).flatMap(HTTPDate.seconds)
        else { return false }
        return modified <= since
    }

    /// Whether `requestHeaders` hold a condition a cache may answer (`If-None-Match`, `If-Modified-Since`).
    public static func isConditional(_ requestHeaders: [String: String]) -> Bool {
        HTTPCacheRules.value("if-none-match", in: requestHeaders) != nil
            || HTTPCacheRules.value("if-modified-since", in: requestHeaders) != nil
    }

    /// The headers of the 304 that stands for a response with `headers` (RFC 9110 §15.4.5):
    /// those a cache needs to update what it keeps and nothing that describes a body.
    public static func notModifiedHeaders(of headers: [String: String]) -> [String: String] {
        headers.filter { name, _ in keptOnNotModified.contains(name.asciiLowercased) }
    }

    private static let keptOnNotModified: Set<String> = [
        "cache-control", "cdn-cache-control", "content-location", "date", "etag", "expires", "vary", "last-modified", "age",
        "cache-status",
    ]

    /// The entity tags of an `If-None-Match` list (commas inside quotes are the tag's).
    static func entityTags(_ list: String) -> [String] {
        var tags: [String] = []
        var current = ""
        var quoted = false
        for character in list {
            if character == "\"" { quoted.toggle() }
            if character == ",", !quoted {
                tags.append(current.trimmingHTTPSpaces)
                current = ""
            } else {
                current.append(character)
            }
        }
        tags.append(current.trimmingHTTPSpaces)
        return tags.filter { !$0.isEmpty }
    }

    /// An entity tag without its weakness indicator, for the weak comparison.
    static func opaqueTag(_ tag: String) -> String {
        let trimmed = tag.trimmingHTTPSpaces
        return trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed
    }
}
