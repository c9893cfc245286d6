import Monarch
import MonarchConfig
import MonarchLoop
import MonarchWire

// The hot tier's place in the coordinator: hits answered before any trip, and every change
// the coordinator passes on or hears dropping what it covers (see ``HotTier``).
extension Coordinator {
    /// The hot tier `configuration` asks for; nil when `limits.hotTier` is 0 or no
    /// domain has a cache. A shared store's entries (Redis) are held at most the cache
    /// workers' memory grace (`workers.cache.memoryGrace`, 5 s by default).
    nonisolated static func makeHotTier(configuration: Configuration) -> HotTierCell? {
        guard configuration.limits.hotTierBytes > 0,
            configuration.domains.contains(where: { $0.providers.contains { PoolRole(workerKind: $0) == .cache } })
        else { return nil }
        var holdMs: Int64?
        for pool in configuration.workers {
            guard case .cache(let cache) = pool.settings, cache.usesRedis else { continue }
            let grace = Int64(clamping: (cache.memoryGrace ?? .seconds(5)).wholeMilliseconds)
            holdMs = min(holdMs ?? grace, grace)
        }
        return HotTierCell(HotTier(limits: configuration.limits, sharedStoreHoldMs: holdMs))
    }

    /// Answers `plan`'s request (message `id`, arrived at `arrived`) from the hot tier when
    /// the cache would be asked first and would answer it as it stands, exactly as a cache
    /// worker's hit goes out (with its age now), counted as a hot hit; returns whether it did
    /// (`done` has then been called). A `GET` that may share, on a chain that starts with a
    /// cache: under `cacheFirst` or `cacheThenRefresh`; relayed for an HTTP client, when it
    /// says nothing of caches (no `Cache-Control`, no `Pragma`) and the entry is fresh by HTTP's
    /// rules (``RelayedHotHit``).
    func answerFromHotTier(
        _ plan: RequestPlan, id: MessageID, arrived: ContinuousClock.Instant,
        done: AnswerHandler
    ) -> Bool {
        let request = plan.request
        guard let hotTier, request.method == "GET", let key = request.route.cacheKey, plan.providers.first is CachePool,
            SharingRules.mayShare(request)
        else { return false }
        let (answer, answered): (ClientAnswer, ResponseMessage)
        // The hot tier's freshness and ages are wall-clock time (``wallClock``), not ``clock``:
        // its entries carry the wall-clock store times the cache workers record.
        if request.relay {
            guard request.policy != .noCache, RelayedHotHit.mayAnswer(request),
                let hit = hotTier.tier.relayedAnswer(for: key, nowMs: wallClock.nowMs, defaultLifetime: request.route.ttl)
            else { return false }
            answer = .relayedHit(RelayedHotHit.Hit(
                prepared: hit.prepared, form: hit.form, ageMs: hit.ageMs, id: id, sharedBody: hit.sharedBody))
            answered = hit.prepared.message
        } else {
            guard request.policy != .noCache, request.policy != .networkFirst,
                let hit = hotTier.tier.answer(for: key, nowMs: wallClock.nowMs)
            else { return false }
            (answer, answered) = (.prepared(hit.prepared, id: id, ageMs: hit.ageMs), hit.prepared.message)
        }
        statistics.record(
            domain: plan.domain, source: answered.source, status: answered.status,
            failureCode: nil, latency: clock.now - arrived, cacheHit: true, hot: true)
        done(answer)
        return true
    }

    /// Drops from the hot tier what `targets` cover, and refuses what reads under way bring
    /// back.
    func changeHotTier(_ targets: [CacheTarget]) {
        guard let hotTier else { return }
        for target in targets { hotTier.tier.change(target) }
    }

    /// The hot tier's figures for `status`; nil when it is off.
    var hotTierFigures: StatusReport.HotTier? {
        guard let tier = hotTier?.tier else { return nil }
        return StatusReport.HotTier(
            budgetBytes: tier.budgetBytes, entryLimitBytes: tier.entryLimitBytes, entries: tier.count,
            bytes: tier.usedBytes, hits: tier.hits, kept: tier.kept, evictions: tier.evictions,
            refusedAfterChange: tier.refusedAfterChange)
    }
}
