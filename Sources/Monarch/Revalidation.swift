/// How a stale cached response is revalidated: the request asks "has it changed since?"
/// (`If-None-Match` / `If-Modified-Since` from the entry's `ETag` / `Last-Modified`), and a
/// `304 Not Modified` makes the stale entry fresh again without a body.
enum Revalidation {
    /// `request` with the conditional headers `stale` allows, unless the request set its own;
    /// `added` says whether any were added (only then does a 304 speak of `stale`).
    static func conditional(_ request: Request, for stale: Response) -> (request: Request, added: Bool) {
        var request = request
        let asked = Set(request.headers.keys.map { $0.lowercased() })
        guard !asked.contains("if-none-match"), !asked.contains("if-modified-since") else { return (request, false) }
        var added = false
        if let etag = header("etag", in: stale.headers) {
            request.headers["If-None-Match"] = etag
            added = true
        }
        if let modified = header("last-modified", in: stale.headers) {
            request.headers["If-Modified-Since"] = modified
            added = true
        }
        return (request, added)
    }

    /// The stale response made fresh by `notModified` (a 304): the stale body, with the
    /// headers the 304 carries replacing the stored ones (RFC 9111 §4.3.4), and its freshness.
    static func refreshed(_ stale: Response, by notModified: Response) -> Response {
        var response = stale
        for (name, value) in notModified.headers where name.lowercased() != "content-length" {
            for existing in response.headers.keys where existing.lowercased() == name.lowercased() {
                response.headers[existing] = nil
            }
            response.headers[name] = value
        }
        response.source = notModified.source
        response.stale = false
        response.age = .zero
        // The 304's freshness, else the entry's own (RFC 9111 §4.3.4: the stored response's
        // metadata stays unless the 304 replaces it).
        response.ttl = notModified.ttl ?? stale.ttl
        response.cacheable = notModified.cacheable
        return response
    }

    /// The value of the header called `name` (any case).
    static func header(_ name: String, in headers: [String: String]) -> String? {
        headers.first { $0.key.lowercased() == name }?.value
    }
}
