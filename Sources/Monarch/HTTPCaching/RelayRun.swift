#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MonarchWire

/// One relayed request's trip down a chain (``Request/relay``), by HTTP's caching rules
/// (``HTTPCacheRules``) rather than a cache policy (but `noCache`, under which caches are
/// passed by as for any request): the storing providers (caches) are read first for a `GET`
/// or `HEAD`; a stored response serves the request when it is fresh enough
/// for it (or stale where the response's stale windows or the request's `max-stale` allow);
/// otherwise the other providers (the origin) are asked, conditionally when the stored
/// response has validators, and what they answer is kept when HTTP allows it (the store is
/// awaited, so the next request finds it). Every answer carries `Cache-Status` (RFC 9211) and,
/// from a cache, its `Age`.
struct RelayRun: Sendable {
    /// The request as the client made it.
    let request: Request
    /// The providers, in chain order.
    let providers: [any RequestProvider]
    let refreshes: RefreshGate
    /// Where background refreshes (`stale-while-revalidate`) run.
    let background: BackgroundWork
    /// Where the time is read (seconds matter: HTTP's dates are whole seconds).
    var clock: WallClock = .system

    /// The name a relayed answer's `Cache-Status` gives this cache.
    static let cacheName = "monarch"

    /// The answer: a stored or forwarded response, or the error listing every attempt.
    func answer() async throws(ChainError) -> Response {
        var attempts: [ProviderAttempt] = []
        let stores = providers.compactMap { $0 as? any ResponseStoring }
        let origins = providers.filter { !($0 is any ResponseStoring) }
        guard Self.readsStores(request, hasStores: !stores.isEmpty) else {
            // No origin to forward to: every provider (none) was asked.
            guard let relay = RelayForwarding(request, along: providers) else { throw ChainError.exhausted(attempts) }
            return relay.answer(try await forward(request, to: relay.origins, attempts: &attempts))
        }
        let asked = HTTPCacheRules.requestDirectives(request.headers)
        var stored: Response?
        for store in stores {
            switch await store.perform(request) {
            case .response(let response): stored = response
            case .miss: continue
            case .failure(let failure): attempts.append(ProviderAttempt(store.name, failed: failure))
            }
            if stored != nil { break }
        }
        guard let stored else {
            if asked.has("only-if-cached") { return gatewayTimeout("nothing is stored for it") }
            return try await fetchAndKeep(request, stores: stores, origins: origins, forward: "fwd=miss", attempts: &attempts)
        }
        let now = clock.nowMs / 1000
        let age = currentAge(of: stored)
        let lifetime = lifetime(of: stored, receivedAt: now - age)
        switch HTTPCacheRules.reuse(storedHeaders: stored.headers, lifetime: lifetime, age: age, requestHeaders: request.headers) {
        case .fresh:
            return served(stored, age: age, detail: "hit; ttl=\(lifetime - age)")
        case .staleAccepted:
            return served(stored, age: age, detail: "hit; ttl=\(lifetime - age)")
        case .staleWhileRevalidate:
            refreshInBackground(stored, stores: stores, origins: origins)
            return served(stored, age: age, detail: "hit; ttl=\(lifetime - age); fwd=stale")
        case .revalidate:
            if asked.has("only-if-cached") { return gatewayTimeout("the stored response needs validation first") }
            let reason = lifetime > age ? "fwd=request" : "fwd=stale"
            return try await revalidate(stored, age: age, lifetime: lifetime, reason: reason, stores: stores, origins: origins, attempts: &attempts)
        }
    }

    // MARK: - Asking the origin

    /// Asks `origins` in turn with `request` (``RelayForwarding/firstResponse(of:to:known:attempts:)``).
    private func forward(_ request: Request, to origins: [any RequestProvider], attempts: inout [ProviderAttempt]) async throws(ChainError) -> Response {
        try await RelayForwarding.firstResponse(of: origins, to: request, attempts: &attempts)
    }

    /// Forwards `request` and keeps the answer when HTTP allows it.
    private func fetchAndKeep(
        _ request: Request, stores: [any ResponseStoring], origins: [any RequestProvider], forward reason: String,
        attempts: inout [ProviderAttempt]
    ) async throws(ChainError) -> Response {
        let requestedAt = clock.nowMs / 1000
        var response = try await forward(request, to: origins, attempts: &attempts)
        let kept = await keep(response, requestedAt: requestedAt, in: stores)
        response.headers["cache-status"] = Self.status(of: response, reason + (kept ? "; stored" : ""))
        return response
    }

    /// Validates `stored` with the origin (with its `ETag` and `Last-Modified` in place of the
    /// client's own conditions); a 304 refreshes it, a 5xx or a failure may be answered with it
    /// where `stale-if-error` allows, anything else replaces it.
    private func revalidate(
        _ stored: Response, age: Int64, lifetime: Int64, reason: String, stores: [any ResponseStoring],
        origins: [any RequestProvider], attempts: inout [ProviderAttempt]
    ) async throws(ChainError) -> Response {
        let etag = HTTPCacheRules.value("etag", in: stored.headers)
        let modified = HTTPCacheRules.value("last-modified", in: stored.headers)
        guard etag != nil || modified != nil else {
            return try await fetchOrStale(request, stored: stored, age: age, lifetime: lifetime, reason: reason, stores: stores, origins: origins, attempts: &attempts)
        }
        var conditional = request
        for name in ["if-none-match", "if-modified-since", "if-match", "if-unmodified-since", "if-range"] {
            for key in conditional.headers.keys where key.asciiLowercased == name { conditional.headers[key] = nil }
        }
        if let etag { conditional.headers["if-none-match"] = etag }
        if let modified { conditional.headers["if-modified-since"] = modified }
        conditional.method = "GET"
        let requestedAt = clock.nowMs / 1000
        let answer: Response
        do {
            answer = try await forward(conditional, to: origins, attempts: &attempts)
        } catch {
            if let detail = staleAnswer(stored, failing: error, staleness: age - lifetime) {
                return served(stored, age: age, detail: "hit; ttl=\(lifetime - age); fwd=stale; detail=\(detail)")
            }
            throw error
        }
        if answer.status == 304 {
            var refreshed = stored
            refreshed.headers = HTTPCacheRules.refreshedHeaders(stored.headers, by: answer.headers)
            refreshed.headers["age"] = nil
            var keptCopy = refreshed
            keptCopy.source = answer.source
            if request.method == "GET" { _ = await keep(keptCopy, requestedAt: requestedAt, in: stores) }
            let receivedAt = clock.nowMs / 1000
            let newAge = HTTPCacheRules.initialAge(headers: answer.headers, requestedAt: requestedAt, receivedAt: receivedAt)
            let newLifetime = HTTPCacheRules.freshnessLifetime(
                headers: refreshed.headers, status: refreshed.status, receivedAt: receivedAt, defaultLifetime: request.route.ttl)
            return served(refreshed, age: newAge, detail: "\(reason); fwd-status=304; ttl=\(newLifetime - newAge)")
        }
        if answer.status >= 500,
            HTTPCacheRules.mayServeStaleOnError(storedHeaders: stored.headers, staleness: age - lifetime, requestHeaders: request.headers)
        {
            return served(stored, age: age, detail: "hit; ttl=\(lifetime - age); fwd=stale; fwd-status=\(answer.status); detail=stale-if-error")
        }
        var response = answer
        let kept = await keep(response, requestedAt: requestedAt, in: stores)
        response.headers["cache-status"] = Self.status(of: response, "\(reason); fwd-status=\(answer.status)" + (kept ? "; stored" : ""))
        return response
    }

    /// Forwards the request as the client made it (the stored response has no validators);
    /// a 5xx or a failure may be answered with `stored` where `stale-if-error` allows.
    private func fetchOrStale(
        _ request: Request, stored: Response, age: Int64, lifetime: Int64, reason: String, stores: [any ResponseStoring],
        origins: [any RequestProvider], attempts: inout [ProviderAttempt]
    ) async throws(ChainError) -> Response {
        let staleOnError = HTTPCacheRules.mayServeStaleOnError(
            storedHeaders: stored.headers, staleness: age - lifetime, requestHeaders: request.headers)
        do {
            let response = try await fetchAndKeep(request, stores: stores, origins: origins, forward: reason, attempts: &attempts)
            if response.status >= 500, staleOnError {
                return served(stored, age: age, detail: "hit; ttl=\(lifetime - age); fwd=stale; fwd-status=\(response.status); detail=stale-if-error")
            }
            return response
        } catch {
            if let detail = staleAnswer(stored, failing: error, staleness: age - lifetime) {
                return served(stored, age: age, detail: "hit; ttl=\(lifetime - age); fwd=stale; detail=\(detail)")
            }
            throw error
        }
    }

    /// Why `stored`, stale by `staleness` seconds, may answer a request whose forward failed
    /// with `error`: `stale-if-error` allows it, or the origin could not be reached
    /// (`disconnected`) and nothing forbids a stale answer; nil when it may not.
    private func staleAnswer(_ stored: Response, failing error: ChainError, staleness: Int64) -> String? {
        if HTTPCacheRules.mayServeStaleOnError(storedHeaders: stored.headers, staleness: staleness, requestHeaders: request.headers) {
            return "stale-if-error"
        }
        let unreachable: Set<FailureCode> = [.connectionFailed, .timeout, .fetchFailed]
        guard !error.attempts.isEmpty, error.attempts.allSatisfy({ $0.code.map(unreachable.contains) ?? false }),
            HTTPCacheRules.mayServeStaleWhenDisconnected(storedHeaders: stored.headers)
        else { return nil }
        return "disconnected"
    }

    /// Refreshes `stale` from the origin in the background, once per key at a time.
    private func refreshInBackground(_ stale: Response, stores: [any ResponseStoring], origins: [any RequestProvider]) {
        guard let key = request.route.cacheKey, refreshes.begin(key) else { return }
        var asking = request
        asking.method = "GET"
        let refresh = RelayRun(request: asking, providers: providers, refreshes: refreshes, background: background, clock: clock)
        let (refreshes, age) = (self.refreshes, currentAge(of: stale))
        let lifetime = lifetime(of: stale, receivedAt: clock.nowMs / 1000 - age)
        let started = background.start {
            var attempts: [ProviderAttempt] = []
            _ = try? await refresh.revalidate(
                stale, age: age, lifetime: lifetime, reason: "fwd=stale", stores: stores, origins: origins, attempts: &attempts)
            refreshes.finish(key)
        }
        if !started { refreshes.finish(key) }
    }

    // MARK: - Keeping and serving

    /// Hands `response`, asked for at `requestedAt`, to `stores` when HTTP lets a shared cache
    /// keep it, fresh for what is left of its lifetime and with its age as received in `Age`;
    /// returns whether it was handed on.
    private func keep(_ response: Response, requestedAt: Int64, in stores: [any ResponseStoring]) async -> Bool {
        guard HTTPCacheRules.mayStore(response, for: request, defaultLifetime: request.route.ttl) else { return false }
        let receivedAt = clock.nowMs / 1000
        let initialAge = HTTPCacheRules.initialAge(headers: response.headers, requestedAt: requestedAt, receivedAt: receivedAt)
        let lifetime = HTTPCacheRules.freshnessLifetime(
            headers: response.headers, status: response.status, receivedAt: receivedAt, defaultLifetime: request.route.ttl)
        var kept = response
        kept.headers["age"] = String(initialAge)
        kept.ttl = .seconds(max(0, lifetime - initialAge))
        kept.stale = false
        kept.cacheable = true
        for store in stores { await store.store(kept, for: request) }
        return true
    }

    /// `stored` as it answers the request: its `Age` now, its `Cache-Status` saying `detail`,
    /// no body for a `HEAD`.
    private func served(_ stored: Response, age: Int64, detail: String) -> Response {
        var response = stored
        response.headers["age"] = String(max(0, age))
        response.headers["cache-status"] = Self.status(of: stored, detail)
        if request.method == "HEAD" { response.body = Data() }
        return response
    }

    /// Whether `request` is one the stores of a chain (when it `hasStores`) are read for: a
    /// `GET` or `HEAD` with a cache key. A route whose policy is noCache keeps nothing and
    /// answers nothing from a cache, over HTTP too. Any other is forwarded to the origins alone.
    static func readsStores(_ request: Request, hasStores: Bool) -> Bool {
        request.isReadOnly && request.route.cacheKey != nil && hasStores && request.policy != .noCache
    }

    /// The `Cache-Status` of `response` with this cache's entry, saying `detail`, after the
    /// entries of the caches before it.
    static func status(of response: Response, _ detail: String) -> String {
        let own = "\(Self.cacheName); \(detail)"
        guard let earlier = HTTPCacheRules.value("cache-status", in: response.headers), !earlier.isEmpty else { return own }
        return earlier + ", " + own
    }

    /// The age of a stored response now: its age when kept (its `Age`) and the time since.
    private func currentAge(of stored: Response) -> Int64 {
        let resident = (stored.age?.components.seconds ?? 0)
        return HTTPCacheRules.ageHeader(stored.headers) + resident
    }

    /// How long `stored`, received at `receivedAt`, stays fresh.
    private func lifetime(of stored: Response, receivedAt: Int64) -> Int64 {
        HTTPCacheRules.freshnessLifetime(
            headers: stored.headers, status: stored.status, receivedAt: receivedAt, defaultLifetime: request.route.ttl)
    }

    /// The 504 a request gets that only a cache may answer (`only-if-cached`), and this one
    /// cannot, saying `why`.
    private func gatewayTimeout(_ why: String) -> Response {
        Response(
            status: 504,
            headers: ["content-type": "text/plain; charset=utf-8", "cache-status": "\(Self.cacheName); fwd=miss; detail=only-if-cached"],
            body: Data("Gateway Timeout: the request is only-if-cached, and \(why)\n".utf8), source: Self.cacheName, cacheable: false)
    }
}
