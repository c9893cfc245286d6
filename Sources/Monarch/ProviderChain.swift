/// Providers registered with domains, asked in registration order: the responder chain.
///
/// For each request the chain asks the providers registered with a domain that contains the
/// request's domain, in registration order. The first response wins and later providers are not
/// asked; misses and failures are recorded and pass the request on. When every provider missed
/// or failed, the request gets one ``ChainError`` listing each outcome. When a provider answers
/// a ``Request/isShareable`` request with a response that ``Response/mayBeStored`` (see
/// ``SharingRules``), every
/// ``ResponseStoring`` provider standing before it in the chain is handed the response
/// (write-back), without delaying the answer.
///
/// The request's cache policy (``CachePolicy``, `cacheFirst` when nil) decides how storing
/// providers and stale responses (past their TTL) are used:
/// - `cacheFirst`: providers in order; a stale response is not answered but revalidated: the
///   later providers are asked with `If-None-Match` / `If-Modified-Since` from it, and a
///   `304` makes it fresh again (and is written back).
/// - `networkFirst`: the providers that do not store first; the storing ones, stale answers
///   allowed, only when all of those missed or failed (stale if error).
/// - `cacheThenRefresh`: a stale response is answered at once, and the later providers are
///   asked in the background to refresh it — once per cache key at a time (stale while
///   revalidate).
/// - `noCache`: storing providers are neither asked nor handed the response.
///
/// A relayed request (``Request/relay``, an HTTP client's) follows HTTP's caching rules
/// instead of a policy (RFC 9111, see ``HTTPCacheRules``), but for `noCache`, which passes
/// the storing providers by for it too.
///
/// Whatever the policy, a read that may not share (``SharingRules/bypassesCaches(_:)``:
/// credentials on a route that is not public, conditions, unknown headers) passes the storing
/// providers by, as under `noCache`.
public struct ProviderChain: Sendable {
    /// One provider and the domain it was registered with.
    public struct Registration: Sendable {
        /// The provider.
        public var provider: any RequestProvider
        /// The domain it serves.
        public var domain: RequestDomain
    }

    /// The registrations, in order.
    public private(set) var registrations: [Registration] = []
    /// The background refreshes of this chain under way.
    public let refreshes = RefreshGate()
    /// Where this chain's write-backs and background refreshes run (bounded).
    public let background = BackgroundWork()

    /// An empty chain.
    public init() {}

    /// Appends `provider` to the chain for requests of `domain` (every request by default).
    public mutating func register(_ provider: any RequestProvider, for domain: RequestDomain = .any) {
        registrations.append(Registration(provider: provider, domain: domain))
    }

    /// The providers a request of `domain` reaches, in order.
    public func providers(for domain: RequestDomain) -> [any RequestProvider] {
        registrations.filter { $0.domain.contains(domain) }.map(\.provider)
    }

    /// Runs `request` down the providers registered for its domain.
    ///
    /// - Throws: ``ChainError`` (`noProviders`, `exhausted`, or `cancelled` when the task was
    ///   cancelled before an answer).
    public func perform(_ request: Request) async throws(ChainError) -> Response {
        try await Self.perform(request, along: providers(for: request.domain), refreshes: refreshes, background: background)
    }

    /// Runs `request` down `providers` with the chain's rules.
    ///
    /// - Parameters:
    ///   - refreshes: where `cacheThenRefresh` claims its background refreshes (a gate of
    ///     its own when nil, which then refreshes once per request that read stale).
    ///   - background: where write-backs and refreshes run (bounded; work beyond its limit
    ///     is dropped).
    ///   - onAttempt: told about each miss or failure as it happens (for progress reports
    ///     such as the attempts listed when a deadline passes).
    /// - Throws: ``ChainError``.
    public static func perform(
        _ request: Request, along providers: [any RequestProvider], refreshes: RefreshGate = RefreshGate(),
        background: BackgroundWork = BackgroundWork(), onAttempt: (ProviderAttempt) -> Void = { _ in }
    ) async throws(ChainError) -> Response {
        let usable = reachable(for: request, from: providers)
        guard !usable.isEmpty else {
            throw ChainError(.noProviders, "no provider serves the request's domain (\(request.domain))")
        }
        if request.relay {
            let run = RelayRun(request: request, providers: providers, refreshes: refreshes, background: background)
            return try await run.answer()
        }
        let run = ChainRun(request: request, providers: usable, refreshes: refreshes, background: background)
        return try await run.answer(onAttempt: onAttempt)
    }

    /// The providers of `providers` that `request` is asked of, in the order they are asked
    /// (until one answers): the storing ones last under `networkFirst`, not at all under `noCache`.
    public static func asked(for request: Request, from providers: [any RequestProvider]) -> [any RequestProvider] {
        let usable = reachable(for: request, from: providers)
        return ChainRun.askingOrder(request.policy, usable).map { usable[$0] }
    }

    /// The providers of `providers` that `request` may reach, in chain order: all of them, less
    /// the storing ones under `noCache` and for a read that passes the caches by (credentials
    /// on a route that is not public, conditions, unknown headers: see ``SharingRules``).
    static func reachable(for request: Request, from providers: [any RequestProvider]) -> [any RequestProvider] {
        let passesCaches = request.policy == .noCache || SharingRules.bypassesCaches(request)
        return passesCaches ? providers.filter { !($0 is any ResponseStoring) } : providers
    }
}
