/// A relayed request (``Request/relay``) that no cache of its chain may answer — not a `GET`
/// or `HEAD`, no cache key, `noCache`, or no cache at all (``RelayRun/readsStores(_:hasStores:)``)
/// — is forwarded to the origins alone: each in turn, the first response the answer, whatever
/// its status, and nothing kept. This is what ``RelayRun`` does with it, told apart so that
/// ``ChainSteps`` can run it one answer at a time.
struct RelayForwarding: Sendable {
    /// The providers that keep nothing (the origins), in chain order.
    let origins: [any RequestProvider]
    /// Whether the chain has caches, which the request passes by: its answer says so.
    private let passesCaches: Bool
    private let isReadOnly: Bool

    /// How `request` is forwarded along `providers`; nil when a cache may answer it (all of
    /// ``RelayRun``'s rules then apply) or no provider is an origin.
    init?(_ request: Request, along providers: [any RequestProvider]) {
        let hasStores = providers.contains { $0 is any ResponseStoring }
        guard !RelayRun.readsStores(request, hasStores: hasStores) else { return nil }
        origins = hasStores ? providers.filter { !($0 is any ResponseStoring) } : providers
        guard !origins.isEmpty else { return nil }
        passesCaches = hasStores
        isReadOnly = request.isReadOnly
    }

    /// The answer an origin's `response` makes: with `Cache-Status` saying the caches were
    /// passed by (RFC 9211: for the method's sake, or having no key for it) when there are any.
    func answer(_ response: Response) -> Response {
        guard passesCaches else { return response }
        var response = response
        response.headers["cache-status"] = RelayRun.status(of: response, isReadOnly ? "fwd=bypass" : "fwd=method")
        return response
    }

    /// Asks `origins` in turn with `request`: the first response is the answer, whatever its
    /// status (named after the origin that gave it, when it names none); misses and failures
    /// are added to `attempts`, and all of them missing or failing is the chain's error.
    /// `known` is what the first of `origins` answered already (nil: it is asked).
    ///
    /// - Throws: ``ChainError``: `exhausted`, or `cancelled` once the task is cancelled.
    static func firstResponse(
        of origins: some Collection<any RequestProvider>, to request: Request, known: ProviderOutcome? = nil,
        attempts: inout [ProviderAttempt]
    ) async throws(ChainError) -> Response {
        var known = known
        for origin in origins {
            if Task.isCancelled { throw ChainError(.cancelled, "the request was cancelled", attempts: attempts) }
            let outcome: ProviderOutcome
            if let answered = known {
                outcome = answered
                known = nil
            } else {
                outcome = await origin.perform(request)
            }
            switch outcome {
            case .response(var response):
                if response.source == nil { response.source = origin.name }
                return response
            case .miss(let reason):
                attempts.append(ProviderAttempt(provider: origin.name, outcome: .miss, message: reason))
            case .failure(let failure):
                attempts.append(ProviderAttempt(origin.name, failed: failure))
            }
        }
        if Task.isCancelled { throw ChainError(.cancelled, "the request was cancelled", attempts: attempts) }
        throw ChainError.exhausted(attempts)
    }
}
