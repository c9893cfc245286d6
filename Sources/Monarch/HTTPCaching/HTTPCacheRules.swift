/// HTTP's rules for a shared cache, as the chain applies them to relayed requests
/// (``Request/relay``): RFC 9111, with `CDN-Cache-Control` (RFC 9213) and the stale windows
/// of RFC 5861. Times are whole seconds, as HTTP writes them.
public enum HTTPCacheRules {
    /// Statuses whose responses may be kept with heuristic freshness (RFC 9110 §15.1).
    public static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Statuses whose meaning this cache knows (for `must-understand`, RFC 9111 §5.2.2.3).
    static let understood: Set<Int> = [
        200, 201, 202, 203, 204, 205, 206, 300, 301, 302, 303, 304, 305, 307, 308, 400, 401, 402, 403, 404, 405, 406,
        407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 421, 422, 426, 500, 501, 502, 503, 504, 505,
    ]

    /// The longest heuristic freshness given (a tenth of the time since `Last-Modified`, at most this).
    public static let heuristicLimit: Int64 = 86_400

    /// The directives that rule a stored response: its `CDN-Cache-Control` when that is a
    /// valid Structured Field (it then replaces `Cache-Control` and `Expires`, RFC 9213 §2.1),
    /// else its `Cache-Control`.
    public struct ResponseControls: Sendable, Equatable {
        /// The ruling directives.
        public var directives: CacheDirectives
        /// Whether they are `CDN-Cache-Control`'s (so `Expires` is not read).
        public var targeted: Bool
    }

    /// The controls of a response with `headers` (lowercase names).
    public static func controls(of headers: [String: String]) -> ResponseControls {
        if let targeted = value("cdn-cache-control", in: headers), let directives = CacheDirectives(structuredField: targeted) {
            return ResponseControls(directives: directives, targeted: true)
        }
        return ResponseControls(directives: CacheDirectives(value("cache-control", in: headers)), targeted: false)
    }

    /// A request's cache directives: its `Cache-Control`, or `no-cache` for a `Pragma:
    /// no-cache` without one (RFC 9111 §5.4).
    public static func requestDirectives(_ headers: [String: String]) -> CacheDirectives {
        if let control = value("cache-control", in: headers) { return CacheDirectives(control) }
        if let pragma = value("pragma", in: headers), CacheDirectives(pragma).has("no-cache") { return CacheDirectives("no-cache") }
        return CacheDirectives()
    }

    /// Whether a shared cache may keep `response`, the answer to `request` (RFC 9111 §3): a
    /// `GET`, a final status other than 206 and 304, neither the request nor the response
    /// saying `no-store` (a response's `must-understand` overrides it for a status this cache
    /// knows, and refuses any other), no `private`, no `Vary: *`, no cookie set (a shared
    /// cache never hands one caller's cookie to others), a request with credentials only for
    /// a response marked `public`, `s-maxage` or `must-revalidate`, and something that says
    /// how long it stays fresh or that it may be kept: `max-age`, `s-maxage`, `Expires`,
    /// `public`, a default lifetime, or a status cacheable by default.
    public static func mayStore(_ response: Response, for request: Request, defaultLifetime: Duration?) -> Bool {
        guard request.method == "GET", (200...599).contains(response.status), response.status != 206, response.status != 304
        else { return false }
        if requestDirectives(request.headers).has("no-store") { return false }
        let controls = controls(of: response.headers)
        let directives = controls.directives
        if directives.has("must-understand") {
            guard understood.contains(response.status) else { return false }
        } else if directives.has("no-store") {
            return false
        }
        if directives.has("private") { return false }
        if let vary = value("vary", in: response.headers),
            vary.split(separator: ",").contains(where: { String($0).trimmingHTTPSpaces == "*" })
        {
            return false
        }
        if value("set-cookie", in: response.headers) != nil || value("set-cookie2", in: response.headers) != nil { return false }
        if value("authorization", in: request.headers) != nil {
            guard directives.has("public") || directives.has("s-maxage") || directives.has("must-revalidate") else { return false }
        }
        return directives.has("max-age") || directives.has("s-maxage") || directives.has("public")
            || (!controls.targeted && value("expires", in: response.headers) != nil)
            || (defaultLifetime.map { $0 > .zero } ?? false) || heuristicallyCacheable.contains(response.status)
    }

    /// How long a response with `headers` and `status`, received at `receivedAt` (seconds since
    /// the epoch), stays fresh, in seconds (RFC 9111 §4.2.1): `s-maxage`, else `max-age`, else
    /// `Expires` less `Date` (an invalid `Expires` is in the past), else `defaultLifetime` (the
    /// route's TTL), else a tenth of the time since `Last-Modified` for a status cacheable by
    /// default or a `public` response (at most ``heuristicLimit``), else 0.
    public static func freshnessLifetime(
        headers: [String: String], status: Int, receivedAt: Int64, defaultLifetime: Duration?
    ) -> Int64 {
        let controls = controls(of: headers)
        let directives = controls.directives
        if let shared = directives.seconds("s-maxage") { return shared }
        if let maxAge = directives.seconds("max-age") { return maxAge }
        let date = value("date", in: headers).flatMap(HTTPDate.seconds) ?? receivedAt
        if !controls.targeted, let expires = value("expires", in: headers) {
            guard let at = HTTPDate.seconds(expires) else { return 0 }
            return max(0, at - date)
        }
        if let defaultLifetime, defaultLifetime > .zero { return defaultLifetime.components.seconds }
        guard heuristicallyCacheable.contains(status) || directives.has("public"),
            let modified = value("last-modified", in: headers).flatMap(HTTPDate.seconds), modified < date
        else { return 0 }
        return min((date - modified) / 10, heuristicLimit)
    }

    /// The age a response with `headers` had when received (RFC 9111 §4.2.3's
    /// `corrected_initial_age`), asked at `requestedAt` and received at `receivedAt` (seconds
    /// since the epoch): the larger of its `Age` (the first value, digits only; others are
    /// ignored) plus the time the exchange took, and the time since its `Date`.
    public static func initialAge(headers: [String: String], requestedAt: Int64, receivedAt: Int64) -> Int64 {
        let ageValue = ageHeader(headers)
        let date = value("date", in: headers).flatMap(HTTPDate.seconds) ?? receivedAt
        let apparentAge = max(0, receivedAt - date)
        let correctedAge = ageValue + max(0, receivedAt - requestedAt)
        return min(max(apparentAge, correctedAge), 1 << 31)
    }

    /// The seconds a response's `Age` says: its first value, digits only (others are
    /// ignored), at most 2^31; 0 without one. For a stored response, which keeps its age on
    /// receipt there, its age when it was kept.
    public static func ageHeader(_ headers: [String: String]) -> Int64 {
        value("age", in: headers).flatMap { text in
            text.split(separator: ",", omittingEmptySubsequences: false).first.map { String($0).trimmingHTTPSpaces }
        }.flatMap(CacheDirectives.deltaSeconds) ?? 0
    }

    /// How a stored response may serve a request.
    public enum Reuse: Sendable, Equatable {
        /// It is fresh enough for the request: served as it is.
        case fresh
        /// It is stale, and the request accepts that (`max-stale`): served as it is.
        case staleAccepted
        /// It is stale within its `stale-while-revalidate` window: served, and refreshed in the background.
        case staleWhileRevalidate
        /// It must be validated with the origin first (or replaced).
        case revalidate
    }

    /// How a stored response with `headers`, fresh for `lifetime` seconds and `age` seconds
    /// old, may serve a request with `requestHeaders` (RFC 9111 §4.2, §5.2.1, §5.2.2; RFC
    /// 5861 §3): the response's `no-cache` and the request's `no-cache`, `max-age` and
    /// `min-fresh` ask for validation; a stale response is served only when neither
    /// `must-revalidate`, `proxy-revalidate`, `s-maxage` nor `no-cache` forbid it, and the
    /// request's `max-stale` or the response's `stale-while-revalidate` allow it.
    public static func reuse(storedHeaders headers: [String: String], lifetime: Int64, age: Int64, requestHeaders: [String: String]) -> Reuse {
        let stored = controls(of: headers).directives
        let asked = requestDirectives(requestHeaders)
        if stored.has("no-cache") || asked.has("no-cache") { return .revalidate }
        if let maxAge = asked.seconds("max-age"), age > maxAge { return .revalidate }
        if let minFresh = asked.seconds("min-fresh"), lifetime - age < minFresh { return .revalidate }
        if lifetime > age { return .fresh }
        if stored.has("must-revalidate") || stored.has("proxy-revalidate") || stored.has("s-maxage") { return .revalidate }
        let staleness = age - lifetime
        if asked.has("max-stale") {
            if let limit = asked.seconds("max-stale") {
                if staleness <= limit { return .staleAccepted }
            } else {
                return .staleAccepted
            }
        }
        if let window = stored.seconds("stale-while-revalidate"), staleness <= window { return .staleWhileRevalidate }
        return .revalidate
    }

    /// Whether a stored response with `headers`, stale by `staleness` seconds, may answer a
    /// request with `requestHeaders` whose forward failed or got a 5xx (RFC 5861 §4:
    /// `stale-if-error` of the response or of the request), unless `must-revalidate`,
    /// `proxy-revalidate` or `s-maxage` forbid serving it stale.
    public static func mayServeStaleOnError(storedHeaders headers: [String: String], staleness: Int64, requestHeaders: [String: String]) -> Bool {
        guard mayServeStaleWhenDisconnected(storedHeaders: headers) else { return false }
        let stored = controls(of: headers).directives
        let window = max(stored.seconds("stale-if-error") ?? -1, requestDirectives(requestHeaders).seconds("stale-if-error") ?? -1)
        return staleness <= window
    }

    /// Whether a stale stored response with `headers` may answer when the origin cannot be
    /// reached (RFC 9111 §4.2.4: a disconnected cache): unless `must-revalidate`,
    /// `proxy-revalidate`, `s-maxage` or `no-cache` forbid serving it stale.
    public static func mayServeStaleWhenDisconnected(storedHeaders headers: [String: String]) -> Bool {
        let stored = controls(of: headers).directives
        return !(stored.has("must-revalidate") || stored.has("proxy-revalidate") || stored.has("s-maxage") || stored.has("no-cache"))
    }

    /// The stored headers as a `304 Not Modified` with `notModified` headers updates them (RFC
    /// 9111 §3.2, §4.3.4): each header the 304 carries replaces the stored one, except
    /// `Content-Length` (the stored body's) and the hop-by-hop ones.
    public static func refreshedHeaders(_ stored: [String: String], by notModified: [String: String]) -> [String: String] {
        var headers = stored
        for (name, value) in notModified {
            let lowered = name.asciiLowercased
            guard lowered != "content-length", !hopByHop.contains(lowered) else { continue }
            headers[lowered] = value
        }
        return headers
    }

    /// Headers a cache keeps for no one (RFC 9111 §3.1): the connection's own.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade", "proxy-authenticate",
        "proxy-authentication-info", "proxy-authorization", "trailer",
    ]

    /// Whether an answer with `status` to a request with `method` makes a cache drop what it
    /// keeps for the request's URL (RFC 9111 §4.4): an unsafe method (not `GET`, `HEAD`,
    /// `OPTIONS` or `TRACE`) answered with a 2xx or 3xx.
    public static func invalidates(method: String, status: Int) -> Bool {
        !["GET", "HEAD", "OPTIONS", "TRACE"].contains(method) && (200..<400).contains(status)
    }

    /// The value of the header called `name` (lowercase) in `headers`, whose names are
    /// lowercase, as Monarch's messages and workers keep them.
    public static func value(_ name: String, in headers: [String: String]) -> String? {
        headers[name]
    }
}
