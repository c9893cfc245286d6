import MonarchWire

// How the chain's values travel in wire messages: one mapping, used by the coordinator, the
// workers and the client.

extension Request {
    /// The request a `request` message describes; its domain is the one the message names
    /// (``RequestDomain/any`` when it names none).
    public init(_ message: RequestMessage) {
        self.init(
            path: message.path, domain: RequestDomain(wireName: message.domain), query: message.query ?? [], method: message.method ?? "GET",
            headers: message.headers ?? [:], body: message.body, policy: message.policy,
            deadline: message.deadlineMs.map { .milliseconds(Int64(clamping: $0)) },
            route: RouteContext(
                parameters: message.params ?? [:], upstream: message.upstream,
                ttl: message.ttlMs.map { .milliseconds(Int64(clamping: $0)) }, cacheKey: message.key),
            relay: message.relay ?? false)
    }

    /// This request as a `request` message with `id`, naming its domain unless it is
    /// ``RequestDomain/any``.
    ///
    /// - Throws: what ``RequestDomain/wireName()`` throws for a union of several domains.
    public func message(id: MessageID) throws(MonarchError) -> RequestMessage {
        RequestMessage(
            id: id, path: path, domain: try domain.wireName(), query: query.isEmpty ? nil : query,
            method: method == "GET" ? nil : method, headers: headers.isEmpty ? nil : headers, body: body,
            policy: policy, deadlineMs: deadline?.wholeMilliseconds,
            params: route.parameters.isEmpty ? nil : route.parameters, upstream: route.upstream,
            ttlMs: route.ttl?.wholeMilliseconds, key: route.cacheKey, relay: relay ? true : nil)
    }
}

extension Response {
    /// The response a `response` message carries, its header names in lowercase (see
    /// ``lowercasedHeaderNames(_:)``).
    public init(_ message: ResponseMessage) {
        self.init(
            status: message.status, headers: Self.lowercasedHeaderNames(message.headers ?? [:]),
            source: message.source, stale: message.stale ?? false,
            age: message.ageMs.map { .milliseconds(Int64(clamping: $0)) },
            ttl: message.ttlMs.map { .milliseconds(Int64(clamping: $0)) }, cacheable: message.cacheable ?? true)
        if let content = message.content { self.content = content }
    }

    /// This response as a `response` message answering `id`, its header names in lowercase.
    public func message(id: MessageID) -> ResponseMessage {
        ResponseMessage(
            id: id, status: status, source: source, headers: headers.isEmpty ? nil : Self.lowercasedHeaderNames(headers),
            stale: stale ? true : nil, ageMs: age?.wholeMilliseconds,
            ttlMs: ttl?.wholeMilliseconds, cacheable: cacheable ? nil : false, content: content.isEmpty ? nil : content)
    }
}

extension Response {
    /// The response a `store` message hands a cache, fresh for its `ttlMs`, its header names
    /// in lowercase.
    public init(_ message: StoreMessage) {
        self.init(
            status: message.status, headers: Self.lowercasedHeaderNames(message.headers ?? [:]),
            ttl: message.ttlMs.map { .milliseconds(Int64(clamping: $0)) })
        if let content = message.content { self.content = content }
    }

    /// This response as a `store` message keeping it under `key`, fresh for `ttl` (for ever
    /// when nil), tagged with `tags`, as the variant `variant` of its key (see
    /// ``SharingRules/storedVariant(of:for:)``; nil: it varies on nothing), its header names in
    /// lowercase.
    public func storeMessage(
        id: MessageID, key: String, ttl: Duration?, tags: [String] = [], variant: String? = nil
    ) -> StoreMessage {
        StoreMessage(
            id: id, key: key, status: status, headers: headers.isEmpty ? nil : Self.lowercasedHeaderNames(headers),
            ttlMs: ttl?.wholeMilliseconds, content: content.isEmpty ? nil : content, tags: tags.isEmpty ? nil : tags,
            variant: variant)
    }
}

extension ProviderOutcome {
    /// A worker's answer to request `id` as the message that carries it.
    public func message(id: MessageID, source: String) -> WireMessage {
        switch self {
        case .response(var response):
            if response.source == nil { response.source = source }
            return .response(response.message(id: id))
        case .miss(let reason):
            return .miss(MissMessage(id: id, source: source, reason: reason))
        case .failure(let failure):
            // A failure message has no source of its own: the source travels as its one attempt,
            // recorded as the chain records it.
            let attempt = ProviderAttempt(source, failed: failure)
            return .failure(FailureMessage(
                id: id, error: .init(code: failure.code, message: failure.message, attempts: [attempt])))
        }
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded down; negative durations give 0, and
    /// durations past `UInt64.max` milliseconds give `UInt64.max`.
    public var wholeMilliseconds: UInt64 {
        // `components` truncates toward zero: -0.5 s is 0 s and -5e17 as, so both parts are checked.
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (ms, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1000)
        let (total, carry) = ms.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000_000_000))
        return overflow || carry ? .max : total
    }
}
