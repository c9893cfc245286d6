import Monarch

extension CachePool {
    /// Asks the worker owning the request's key, and hands what it answers to the hot tier
    /// (``HotTier/keep(_:for:ticket:askedAtMs:)``) under a ticket taken before the question, so
    /// that an answer raced by a change is not kept. Asked on behalf of `trip`.
    func performKeepingHot(_ request: Request, on trip: WorkerPool.Trip?) async -> ProviderOutcome {
        guard let hotTier, hotTier.tier.isOn, request.method == "GET" else {
            return await pool.perform(request, on: trip)
        }
        let ticket = hotTier.tier.beginRead()
        // Wall-clock time, not ``clock``: entry ages are measured against the wall-clock store
        // times the cache workers record.
        let askedAtMs = wallClock.nowMs
        let outcome = await pool.perform(request, on: trip)
        // Only what the worker answers as its own entry (source `cache`), as it answers it.
        if case .response(var response) = outcome, response.source ?? name == name {
            response.source = name
            hotTier.tier.keep(response, for: request, ticket: ticket, askedAtMs: askedAtMs)
        } else {
            hotTier.tier.endRead()
        }
        return outcome
    }
}
