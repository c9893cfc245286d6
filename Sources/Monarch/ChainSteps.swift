/// One request's run down a chain taken one answer at a time, for a caller that asks each
/// provider itself and is told its answer by a callback (the coordinator's trips, which ask
/// their worker pools from the event loop without a task): the same rules as
/// ``ProviderChain/perform(_:along:refreshes:background:onAttempt:)``, which it hands the run
/// back to (``finish(from:known:prior:onAttempt:)``) wherever the rest must be awaited.
///
/// A miss or a failure is recorded and passes the request on; a fresh response ends the run
/// at once, its write-back begun as the chain begins it. A stale response (revalidation,
/// stale while revalidate, stale if error) goes back to the asynchronous run.
package struct ChainSteps: Sendable {
    /// The run over the providers as they are.
    private let run: ChainRun
    /// The positions of `run.providers` in the order they are asked.
    private let order: [Int]
    /// The provider the run writes back to and goes on with in place of each one.
    private let leg: @Sendable (any RequestProvider) -> any RequestProvider
    /// How a relayed request forwarded to the origins alone is answered (see
    /// ``RelayForwarding``); nil for any other request.
    private let relay: RelayForwarding?

    /// The stepwise run of `request` down `providers`, where the write-backs and the rest of
    /// the run asked asynchronously go to `leg` of each provider (the provider as one trip
    /// sees it; `leg` must keep whether it stores responses); nil when the request takes
    /// another path (a relayed request a cache may answer follows HTTP's rules) or no provider
    /// serves it: the
    /// caller then runs ``ProviderChain/perform(_:along:refreshes:background:onAttempt:)``.
    /// A relayed request that no cache may answer (``RelayForwarding``) is run stepwise too,
    /// as ``RelayRun`` forwards it: to the origins in turn, the first response the answer.
    package init?(
        _ request: Request, along providers: [any RequestProvider],
        leg: @escaping @Sendable (any RequestProvider) -> any RequestProvider = { $0 },
        refreshes: RefreshGate, background: BackgroundWork
    ) {
        let usable = ProviderChain.reachable(for: request, from: providers)
        guard !usable.isEmpty else { return nil }
        if request.relay {
            guard let relay = RelayForwarding(request, along: providers) else { return nil }
            run = ChainRun(request: request, providers: relay.origins, refreshes: refreshes, background: background)
            order = Array(relay.origins.indices)
            self.relay = relay
        } else {
            run = ChainRun(request: request, providers: usable, refreshes: refreshes, background: background)
            order = ChainRun.askingOrder(request.policy, usable)
            relay = nil
        }
        self.leg = leg
    }

    /// The run over the legs of the providers (made only when a write-back or the
    /// asynchronous rest needs it).
    private var legRun: ChainRun {
        ChainRun(request: run.request, providers: run.providers.map(leg), refreshes: run.refreshes, background: run.background)
    }

    /// The request the run answers.
    package var request: Request { run.request }

    /// The provider asked at `step` (0 first); nil past the last.
    package func provider(at step: Int) -> (any RequestProvider)? {
        step < order.count ? run.providers[order[step]] : nil
    }

    /// What the run does after an answer.
    package enum Next: Sendable {
        /// The run's answer (its write-back begun).
        case answer(Response)
        /// Ask the provider at this step.
        case ask(Int)
        /// Every provider missed or failed.
        case exhausted(ChainError)
        /// Hand the answer to ``finish(from:known:prior:onAttempt:)``: it needs the
        /// asynchronous run (a stale response).
        case finishAsync
    }

    /// Takes `outcome`, what the provider at `step` answered; a miss or a failure is appended
    /// to `attempts` and told to `onAttempt`, as the chain records it.
    package func take(
        _ outcome: ProviderOutcome, at step: Int, attempts: inout [ProviderAttempt], onAttempt: (ProviderAttempt) -> Void
    ) -> Next {
        let provider = run.providers[order[step]]
        let attempt: ProviderAttempt
        switch outcome {
        case .response(var response):
            if let relay {
                // Any response of an origin, stale or not, as it is; nothing is written back.
                if response.source == nil { response.source = provider.name }
                return .answer(relay.answer(response))
            }
            guard !response.stale else { return .finishAsync }
            if response.source == nil { response.source = provider.name }
            if order[step] > 0 { legRun.writeBack(response, answeredAt: order[step]) }
            return .answer(response)
        case .miss(let reason):
            attempt = ProviderAttempt(provider: provider.name, outcome: .miss, message: reason)
        case .failure(let failure):
            attempt = ProviderAttempt(provider.name, failed: failure)
        }
        attempts.append(attempt)
        // A relayed run tells none as it goes, as ``RelayRun`` tells none.
        if relay == nil { onAttempt(attempt) }
        return step + 1 < order.count ? .ask(step + 1) : .exhausted(ChainError.exhausted(attempts))
    }

    /// The rest of the run from `step`, asynchronously: `known` is what the provider at `step`
    /// answered already (nil: it is asked), `prior` the attempts recorded so far.
    ///
    /// - Throws: ``ChainError``, as the chain does.
    package func finish(
        from step: Int, known: ProviderOutcome?, prior: [ProviderAttempt], onAttempt: (ProviderAttempt) -> Void
    ) async throws(ChainError) -> Response {
        guard let relay else {
            return try await legRun.ask(Array(order[step...]), held: nil, prior: prior, known: known, onAttempt: onAttempt)
        }
        // As ``RelayRun`` forwards: the origins in turn, the first response the answer.
        let legs = run.providers.map(leg)
        var attempts = prior
        let origins = order[step...].map { legs[$0] }
        return relay.answer(try await RelayForwarding.firstResponse(of: origins, to: request, known: known, attempts: &attempts))
    }
}
