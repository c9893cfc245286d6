import MonarchWire

/// One request's trip down a chain, with the rules of its cache policy (see ``ProviderChain``).
struct ChainRun: Sendable {
    /// The request as the client made it.
    let request: Request
    /// The providers it may reach, in chain order (write-back goes to the storing ones before
    /// the provider that answered, in this order).
    let providers: [any RequestProvider]
    let refreshes: RefreshGate
    /// Where write-backs and refreshes run.
    let background: BackgroundWork

    /// The positions in `providers` in the order they are asked under `policy`.
    static func askingOrder(_ policy: CachePolicy?, _ providers: [any RequestProvider]) -> [Int] {
        guard policy == .networkFirst else { return Array(providers.indices) }
        let storing = providers.indices.filter { providers[$0] is any ResponseStoring }
        return providers.indices.filter { !storing.contains($0) } + storing
    }

    /// The answer: the first usable response, or the error listing every attempt.
    func answer(onAttempt: (ProviderAttempt) -> Void) async throws(ChainError) -> Response {
        let order = Self.askingOrder(request.policy, providers)
        return try await ask(order, held: nil, onAttempt: onAttempt)
    }

    /// Asks the providers at `order`, in turn. `held` is a stale response being revalidated.
    /// `prior` are the attempts recorded before (by ``ChainSteps``), and `known` is what the
    /// first provider of `order` already answered (it is not asked again).
    func ask(
        _ order: [Int], held: Response?, prior: [ProviderAttempt] = [], known: ProviderOutcome? = nil,
        onAttempt: (ProviderAttempt) -> Void
    ) async throws(ChainError) -> Response {
        let policy = request.policy ?? .cacheFirst
        var held = held
        var asking = request
        // Whether `asking` carries validators the chain took from `held`: only then is a 304 about it.
        var validating = false
        if let held { (asking, validating) = Revalidation.conditional(request, for: held) }
        var attempts = prior
        var known = known
        func record(_ attempt: ProviderAttempt) {
            attempts.append(attempt)
            onAttempt(attempt)
        }
        for position in order {
            if Task.isCancelled { throw ChainError(.cancelled, "the request was cancelled", attempts: attempts) }
            let provider = providers[position]
            let outcome: ProviderOutcome
            if let answered = known {
                outcome = answered
                known = nil
            } else {
                outcome = await provider.perform(asking)
            }
            switch outcome {
            case .response(var response):
                if response.source == nil { response.source = provider.name }
                if response.stale {
                    switch policy {
                    case .cacheThenRefresh:
                        refreshInBackground(response, after: position)
                        return response
                    case .networkFirst where provider is any ResponseStoring:
                        // Storing providers are asked last under networkFirst: the fetch failed.
                        return response
                    default:
                        // Not answered; the later providers are asked whether it changed.
                        record(ProviderAttempt(
                            provider: provider.name, outcome: .miss,
                            message: "stale entry (\(response.age?.wholeMilliseconds ?? 0) ms old), revalidating"))
                        held = response
                        (asking, validating) = Revalidation.conditional(request, for: response)
                        continue
                    }
                }
                if response.status == 304, validating, let stale = held {
                    response = Revalidation.refreshed(stale, by: response)
                }
                writeBack(response, answeredAt: position)
                return response
            case .miss(let reason):
                record(ProviderAttempt(provider: provider.name, outcome: .miss, message: reason))
            case .failure(let failure):
                record(ProviderAttempt(provider.name, failed: failure))
            }
        }
        if Task.isCancelled { throw ChainError(.cancelled, "the request was cancelled", attempts: attempts) }
        throw ChainError.exhausted(attempts)
    }

    /// Hands a cacheable success to the storing providers before `position`, in the background
    /// (dropped when the background work is full or draining: a cache may miss, never lie).
    func writeBack(_ response: Response, answeredAt position: Int) {
        guard position > 0, SharingRules.mayStore(response, for: request) else { return }
        for case let store as any ResponseStoring in providers[..<position] {
            let request = self.request
            background.start { await store.store(response, for: request) }
        }
    }

    /// Asks the providers after `position` for a fresh copy of `stale`, in the background and
    /// once per cache key at a time; what they answer is written back.
    private func refreshInBackground(_ stale: Response, after position: Int) {
        let key = request.route.cacheKey
            ?? "\(request.method) \(request.domain) \(request.path) \(request.query)"
        guard refreshes.begin(key) else { return }
        var asking = request
        asking.policy = .cacheFirst
        let refresh = ChainRun(request: asking, providers: providers, refreshes: refreshes, background: background)
        let later = Array(providers.indices.dropFirst(position + 1))
        let refreshes = self.refreshes
        let started = background.start {
            _ = try? await refresh.ask(later, held: stale, onAttempt: { _ in })
            refreshes.finish(key)
        }
        if !started { refreshes.finish(key) }
    }
}
