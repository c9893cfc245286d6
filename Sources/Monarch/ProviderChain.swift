/// Providers registered with domains, asked in registration order: the responder chain.
///
/// For each request the chain asks the providers registered with a domain that contains the
/// request's domain, in registration order. The first response wins and later providers are not
/// asked; misses and failures are recorded and pass the request on. When every provider missed
/// or failed, the request gets one ``ChainError`` listing each outcome. When a provider answers
/// with a cacheable success, every ``ResponseStoring`` provider asked before it is handed the
/// response (write-back), without delaying the answer. A request whose policy is `noCache`
/// skips storing providers altogether.
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
        try await Self.perform(request, along: providers(for: request.domain))
    }

    /// Runs `request` down `providers`, in order, with the chain's rules.
    ///
    /// - Parameter onAttempt: told about each miss or failure as it happens (for progress
    ///   reports such as the attempts listed when a deadline passes).
    /// - Throws: ``ChainError``.
    public static func perform(
        _ request: Request, along providers: [any RequestProvider],
        onAttempt: (ProviderAttempt) -> Void = { _ in }
    ) async throws(ChainError) -> Response {
        let usable = asked(for: request, from: providers)
        guard !usable.isEmpty else {
            throw ChainError(.noProviders, "no provider serves the request's domain (\(request.domain))")
        }
        var attempts: [ProviderAttempt] = []
        for (position, provider) in usable.enumerated() {
            if Task.isCancelled { throw ChainError(.cancelled, "the request was cancelled", attempts: attempts) }
            switch await provider.perform(request) {
            case .response(var response):
                if response.source == nil { response.source = provider.name }
                writeBack(response, for: request, to: usable[..<position])
                return response
            case .miss(let reason):
                let attempt = ProviderAttempt(provider: provider.name, outcome: .miss, message: reason)
                attempts.append(attempt)
                onAttempt(attempt)
            case .failure(let failure):
                let outcome: ProviderAttempt.Outcome =
                    failure.code == ProviderFailure.cancelled.code ? .cancelled : .failure
                let attempt = ProviderAttempt(
                    provider: provider.name, outcome: outcome, code: failure.code, message: failure.message)
                attempts.append(attempt)
                onAttempt(attempt)
            }
        }
        if Task.isCancelled { throw ChainError(.cancelled, "the request was cancelled", attempts: attempts) }
        throw ChainError.exhausted(attempts)
    }

    /// The providers of `providers` that `request` is asked of, in order: all of them, less the
    /// storing ones when the policy is `noCache`.
    public static func asked(for request: Request, from providers: [any RequestProvider]) -> [any RequestProvider] {
        request.policy == .noCache ? providers.filter { !($0 is any ResponseStoring) } : providers
    }

    /// Hands a cacheable success to the storing providers asked before the one that answered.
    private static func writeBack(
        _ response: Response, for request: Request, to earlier: ArraySlice<any RequestProvider>
    ) {
        guard response.isSuccess, response.cacheable, !response.stale, request.isReadOnly else { return }
        for case let store as any ResponseStoring in earlier {
            Task { await store.store(response, for: request) }
        }
    }
}
