import Monarch
import MonarchConfig
import MonarchRouter
import MonarchWire

/// What the coordinator does with one client request: the request as the providers see it,
/// the chain it goes down, how long its client waits, and the key it shares a trip under.
struct RequestPlan {
    /// The request with its route context, its path in canonical form; its `deadline` is
    /// ``deadline`` (a trip others join grows its budget with theirs: see ``Flight``).
    var request: Request
    /// The domain's name.
    var domain: String
    /// The domain's chain.
    var providers: [any RequestProvider]
    /// The time this client waits at most.
    var deadline: Duration
    /// The key identical reads in flight share: the request key, the cache policy and the
    /// values of the negotiation and route-keyed headers (``Request/negotiationVariant``); nil
    /// for requests that are not ``Request/isShareable`` (mutations, bodies, credentials off a
    /// public route, conditions, unknown headers) and for relayed ones, which never share a trip.
    var sharedKey: String?

    /// Plans `message`, requested for `host` (an HTTP request's, lowercase, without port; nil
    /// for the wire protocol's requests, which name none): checks it against `limits`, parses
    /// its path, finds its route (among those for `host` and those for any host: see
    /// ``Router``) and domain, fills in the upstream; a route with a host keys its entries
    /// under it (``CacheKey``). Header names are lowercased, as the protocol compares them
    /// (names differing only in case become one header, values joined in name order). A read
    /// that may share loses the tracing ids its route does not key
    /// (``SharingRules/upstreamHeaders(of:)``).
    ///
    /// The client's deadline is the shortest of its `deadlineMs` and the route's timeout (else
    /// `limits.timeout`).
    /// - Throws: ``ChainError``: `requestTooLarge` (path, query or headers over `limits`, checked
    ///   before anything is parsed), `invalidRequest` (a header name that is not an HTTP token,
    ///   a header value with control characters), `invalidPath` (also a parameter that would
    ///   add segments upstream), `noRoute` or `unknownDomain`.
    init(
        _ message: RequestMessage, host: String? = nil, router: Router<RouteOptions>, chains: [String: [any RequestProvider]],
        limits: Configuration.Limits, routes: RouteCache = RouteCache(capacity: 0)
    ) throws(ChainError) {
        try Self.checkSize(of: message, within: limits)
        try Self.checkHeaders(message.headers ?? [:], within: limits, relayed: message.relay == true)
        let host = router.routedHost(host)
        // The route cache keeps the path without its query, which routing never reads: a path
        // asked for with a different query each time is parsed and routed once.
        let split = PathAndQuery(message.path)
        let routed = try routes.entry(for: split.path, host: host) { (text) throws(ChainError) in
            let path: ResourcePath
            do throws(PathError) {
                path = try ResourcePath(parsing: text)
            } catch {
                throw Self.invalidPath(message.path, split.path == message.path ? error : nil)
            }
            let encoded = path.encoded
            let match = router.match(path, host: host)
            return RouteCache.Entry(
                path: path, encoded: encoded, match: match, plainRead: Self.plainRead(of: path, encoded: encoded, match: match))
        }
        var pathQuery = routed.path.query
        if let queryText = split.query {
            do throws(PathError) {
                pathQuery = try ResourcePath.queryItems(parsing: queryText)
            } catch {
                throw Self.invalidPath(message.path, error)
            }
        }
        let method = message.method ?? "GET"
        // A plain read's parts were worked out for the path with no query of its own.
        let plain = message.domain == nil && method == "GET" && (message.query ?? []).isEmpty
            && (split.query == nil || pathQuery.isEmpty) ? routed.plainRead : nil
        let query = message.query.map { pathQuery + $0 } ?? pathQuery
        guard query.count <= limits.queryItems else {
            throw ChainError(.requestTooLarge, "the request has \(query.count) query items; the limit is \(limits.queryItems) (limits.queryItems)")
        }
        guard let match = routed.match else {
            throw ChainError(.noRoute, "no route matches \(LogText.quoted(routed.encoded))")
        }
        let route = match.target
        let domain = message.domain ?? route.domain
        guard let chain = chains[domain] else {
            throw ChainError(.unknownDomain, "no domain is called \(LogText.quoted(domain))")
        }
        let upstream: String?
        if let plain {
            upstream = plain.upstream
        } else {
            do {
                upstream = try route.upstream?.url(parameters: match.parameters, remainder: match.remainder, query: query)
            } catch {
                throw ChainError(.invalidPath, "invalid path \(LogText.quoted(routed.encoded)): \(error.message)")
            }
        }
        // A relayed HEAD is answered from the GET's entry (RFC 9111 §4: a HEAD may be
        // answered with a stored GET response's headers).
        let keyMethod = message.relay == true && method == "HEAD" ? "GET" : method
        let key = plain?.cacheKey
            ?? CacheKey(method: keyMethod, domain: domain, host: match.host?.description, encodedPath: routed.encoded, query: query)
                .rawValue
        // A TTL the client asks for is honoured within the route's: it may shorten, never lengthen.
        let requestedTTL = message.ttlMs.map { asked in
            let duration = Duration.milliseconds(Int64(clamping: asked))
            return route.ttl.map { min($0, duration) } ?? duration
        }
        var deadline = route.timeout ?? limits.timeout
        if let asked = message.deadlineMs { deadline = min(deadline, .milliseconds(Int64(clamping: asked))) }
        request = Request(
            path: routed.encoded, domain: plain?.domain ?? RequestDomain(domain), query: query, method: method, headers: Response.lowercasedHeaderNames(message.headers ?? [:]), body: message.body,
            policy: message.policy ?? route.policy, deadline: deadline,
            route: RouteContext(
                parameters: match.parameters, upstream: upstream, ttl: requestedTTL ?? route.ttl, cacheKey: key,
                requestedTTL: requestedTTL, isPublic: route.isPublic, keyedHeaders: route.keyedHeaders),
            relay: message.relay ?? false)
        // A read that shares carries upstream only what its sharing accounts for.
        if !request.headers.isEmpty { request.headers = SharingRules.upstreamHeaders(of: request) }
        providers = chain
        self.domain = domain
        self.deadline = deadline
        // Reads share a trip only under the same policy (a `noCache` read must not take a
        // cache's answer) and the same negotiation headers; never a read whose answer may be
        // for its caller alone.
        if request.relay {
            // HTTP's rules decide per request what a stored or fetched answer may serve.
            sharedKey = nil
        } else if let plain, message.policy == nil, message.ttlMs == nil, (message.headers ?? [:]).isEmpty,
           message.body?.isEmpty ?? true {
            // A plain read with nothing of its own: the path's shared key, worked out once.
            sharedKey = plain.sharedKey
        } else if request.isShareable {
            sharedKey = Self.sharedKey(
                cacheKey: key, policy: request.policy, requestedTTL: requestedTTL, variant: request.negotiationVariant)
        }
    }

    /// The key identical reads share a trip under (see ``sharedKey``): reads asking for
    /// different TTLs store differently, so they do not share.
    private static func sharedKey(cacheKey: String, policy: CachePolicy?, requestedTTL: Duration?, variant: String) -> String {
        let ttl = requestedTTL.map { " ttl=\($0.wholeMilliseconds)" } ?? ""
        return "\(cacheKey) \(policy?.rawValue ?? "default")\(ttl)\n\(variant)"
    }

    /// The `invalidPath` refusal of `text`, for `error` (nil: the error of parsing `text` whole,
    /// the one a path whose query was split off, and failed apart, names).
    private static func invalidPath(_ text: String, _ error: PathError?) -> ChainError {
        var error = error
        if error == nil {
            do throws(PathError) { _ = try ResourcePath(parsing: text) } catch let whole { error = whole }
        }
        return ChainError(.invalidPath, "invalid path \(LogText.quoted(text)): \(error?.message ?? "unparsable")")
    }

    /// What a plain read of `path` (`encoded`), routed to `match`, comes to; nil when it
    /// matched no route or its upstream cannot be built (a plain read then fails as any other
    /// would).
    private static func plainRead(
        of path: ResourcePath, encoded: String, match: RouteMatch<RouteOptions>?
    ) -> RouteCache.PlainRead? {
        guard let match else { return nil }
        let route = match.target
        let upstream: String?
        do {
            upstream = try route.upstream?.url(parameters: match.parameters, remainder: match.remainder, query: path.query)
        } catch {
            return nil
        }
        let cacheKey = CacheKey(
            method: "GET", domain: route.domain, host: match.host?.description, encodedPath: encoded, query: path.query
        ).rawValue
        return RouteCache.PlainRead(
            domain: RequestDomain(route.domain), upstream: upstream, cacheKey: cacheKey,
            sharedKey: sharedKey(cacheKey: cacheKey, policy: route.policy, requestedTTL: nil, variant: ""))
    }

    /// Refuses a path or query over `limits` from counts alone, before anything is parsed.
    private static func checkSize(of message: RequestMessage, within limits: Configuration.Limits) throws(ChainError) {
        let pathBytes = message.path.utf8.count
        guard pathBytes <= limits.pathBytes else {
            throw ChainError(.requestTooLarge, "the path is \(pathBytes) bytes; the limit is \(limits.pathBytes) (limits.pathBytes)")
        }
        let components = message.path.utf8.count { $0 == UInt8(ascii: "/") } + 1
        guard components <= limits.pathComponents else {
            throw ChainError(
                .requestTooLarge,
                "the path has \(components) components; the limit is \(limits.pathComponents) (limits.pathComponents)")
        }
        let query = message.query ?? []
        guard query.count <= limits.queryItems else {
            throw ChainError(.requestTooLarge, "the request has \(query.count) query items; the limit is \(limits.queryItems) (limits.queryItems)")
        }
        // The path's own `?query` is bounded by pathBytes; the `query` field by queryBytes.
        let queryBytes = query.reduce(0) { $0 + $1.name.utf8.count + ($1.value?.utf8.count ?? 0) }
        guard queryBytes <= limits.queryBytes else {
            throw ChainError(
                .requestTooLarge, "the query items are \(queryBytes) bytes; the limit is \(limits.queryBytes) (limits.queryBytes)")
        }
    }

    /// Refuses too many or too large headers, names that are not HTTP tokens and values with
    /// control characters other than HTAB (they would let a client write headers of its own
    /// upstream, or split them). A relayed request (an HTTP client's, which carries all of
    /// its headers) may have as many as the HTTP listener takes, when that is more.
    private static func checkHeaders(
        _ headers: [String: String], within limits: Configuration.Limits, relayed: Bool
    ) throws(ChainError) {
        let (most, mostKey) = relayed && limits.httpHeaders > limits.headers
            ? (limits.httpHeaders, "limits.httpHeaders") : (limits.headers, "limits.headers")
        guard headers.count <= most else {
            throw ChainError(.requestTooLarge, "the request has \(headers.count) headers; the limit is \(most) (\(mostKey))")
        }
        let bytes = headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        let (largest, largestKey) = relayed && limits.httpHeaderBlockBytes > limits.headerBytes
            ? (limits.httpHeaderBlockBytes, "limits.httpHeaderBlock") : (limits.headerBytes, "limits.headerBytes")
        guard bytes <= largest else {
            throw ChainError(.requestTooLarge, "the headers are \(bytes) bytes; the limit is \(largest) (\(largestKey))")
        }
        for (name, value) in headers {
            guard !name.isEmpty, name.utf8.allSatisfy(HTTPToken.isTokenByte) else {
                throw ChainError(.invalidRequest, "the header name \(LogText.quoted(name)) is not an HTTP token")
            }
            guard !value.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else {
                throw ChainError(.invalidRequest, "the value of header \(name) holds control characters")
            }
        }
    }
}

/// The characters of an HTTP token (RFC 9110 §5.6.2), which header names are.
enum HTTPToken {
    /// Whether `byte` is a tchar.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
