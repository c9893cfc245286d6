/// The one place that says which answers may go to whom: whether a request may use shared
/// answers (a cache's entry, another request's trip), whether an answer may be kept for other
/// requests, and which request headers a kept answer depends on (RFC 9111 §4.1, `Vary`).
///
/// The chain (write-back, cache bypass), the coordinator (shared trips, headers sent
/// upstream) and the cache workers (matching a stored variant) all ask here, so that a rule
/// changes in one place. Header names are compared in lowercase.
public enum SharingRules {
    /// Whether `request` may be answered with what was fetched for other requests, and its
    /// answer kept for them: a read (`GET`, `HEAD`) without a body whose every header is
    /// neutral, a tracing id, a negotiation header, one of the route's keyed headers
    /// (``RouteContext/keyedHeaders``), or a credential on a public route
    /// (``RouteContext/isPublic``). A credential elsewhere, a condition, a range or an unknown
    /// header may make the answer the caller's alone.
    public static func mayShare(_ request: Request) -> Bool {
        guard request.isReadOnly, request.body?.isEmpty ?? true else { return false }
        return request.headers.keys.allSatisfy { name in
            switch HeaderRole(name: name) {
            case .neutral, .tracing, .negotiation: true
            case .credential: request.route.isPublic || request.route.keyedHeaders.contains(name.asciiLowercased)
            case .personal: request.route.keyedHeaders.contains(name.asciiLowercased)
            }
        }
    }

    /// Whether `request`, a read, must pass the caches by: it may not share (``mayShare(_:)``),
    /// so no cache answers it and its answer is not kept (Varnish's built-in rule for requests
    /// with credentials). Mutations are not concerned: caches miss them.
    public static func bypassesCaches(_ request: Request) -> Bool {
        request.isReadOnly && !mayShare(request)
    }

    /// Whether `response`, the answer to `request`, may be kept by a shared cache and served
    /// to other requests whose varied headers match (``storedVariant(of:for:)``): the request
    /// may share, and the response ``Response/mayBeStored`` (fresh, 200/203/204, not private
    /// or no-store, no cookie set, no `Vary: *`).
    public static func mayStore(_ response: Response, for request: Request) -> Bool {
        mayShare(request) && response.mayBeStored
    }

    /// Whether `response`, the answer to `request`, may be kept under its key alone and handed
    /// to every caller of that key without looking at their headers (what a cache of ready
    /// answers in front of the cache workers may hold): it may be stored
    /// (``mayStore(_:for:)``) and varies on nothing (``storedVariant(of:for:)`` is nil).
    public static func mayServeToEveryCaller(_ response: Response, for request: Request) -> Bool {
        mayStore(response, for: request) && storedVariant(of: response, for: request) == nil
    }

    /// Whether a cache entry (or a shared trip's answer) that varies as `storedVariant` says
    /// (nil: it varies on nothing) may answer a request with `headers`: the request's values
    /// of the varied headers, normalised, are the stored ones.
    public static func matches(storedVariant: String?, headers: [String: String]) -> Bool {
        guard let storedVariant else { return true }
        return variant(of: headers, on: variedNames(of: storedVariant)) == storedVariant
    }

    /// What the entry of `response` for `request` remembers of the request: the values of the
    /// headers the entry varies on (the response's `Vary`, less `Accept-Encoding` since bodies
    /// are kept decoded, and the route's keyed headers), as ``variant(of:on:)`` writes them;
    /// nil when it varies on none (one entry answers every request of its key).
    public static func storedVariant(of response: Response, for request: Request) -> String? {
        var names = Set(request.route.keyedHeaders)
        for (name, value) in response.headers where name.asciiLowercased == "vary" {
            for item in value.split(separator: ",") {
                let item = item.trimmingOWS.asciiLowercased
                if !item.isEmpty, item != "accept-encoding" { names.insert(item) }
            }
        }
        return names.isEmpty ? nil : variant(of: request.headers, on: names.sorted())
    }

    /// The values of `names` (lowercase) in `headers`, normalised (``normalisedValue(_:of:)``),
    /// as lines `name:value` in the order given, a header `headers` lacks written as its name
    /// alone (so that absent and empty differ).
    public static func variant(of headers: [String: String], on names: [String]) -> String {
        var lowered: [String: String] = [:]
        for (name, value) in headers { lowered[name.asciiLowercased] = value }
        return names.map { name in
            lowered[name].map { "\(name):\(normalisedValue($0, of: name))" } ?? name
        }.joined(separator: "\n")
    }

    /// The header names of a variant ``variant(of:on:)`` wrote.
    public static func variedNames(of variant: String) -> [String] {
        variant.split(separator: "\n", omittingEmptySubsequences: true).map { line in
            String(line.prefix { $0 != ":" })
        }
    }

    /// `value` as variants compare it (RFC 9111 §4.1 lets a cache normalise): the items of a
    /// list trimmed of spaces around commas, empty items left out; for the `Accept*` headers,
    /// whose tokens ignore case, in lowercase.
    public static func normalisedValue(_ value: String, of name: String) -> String {
        let items = value.split(separator: ",").map(\.trimmingOWS).filter { !$0.isEmpty }
        let joined = items.joined(separator: ",")
        return name.hasPrefix("accept") ? joined.asciiLowercased : joined
    }

    /// The headers `request` carries upstream: all of them for a request that shares nothing;
    /// for one that may share (``mayShare(_:)``), all but the tracing ids the route does not
    /// key, since its answer may reach other callers (an upstream echoing `X-Request-Id` would
    /// hand one caller's id to all).
    public static func upstreamHeaders(of request: Request) -> [String: String] {
        guard mayShare(request) else { return request.headers }
        return request.headers.filter { name, _ in
            HeaderRole(name: name) != .tracing || request.route.keyedHeaders.contains(name.asciiLowercased)
        }
    }
}

extension Substring {
    /// The text without spaces and tabs at either end (HTTP's optional whitespace).
    fileprivate var trimmingOWS: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
