import MonarchWire

// Metrics: the coordinator's totals as Prometheus counters and gauges (names and labels after
// Prometheus's conventions), brought up to date when scraped.
extension Coordinator {
    /// Brings every metric up to date: requests, answers by source and status, failures by
    /// code, cache hits and misses (and the hot tier's hits among them, its entries, bytes and
    /// evictions), coalesced joins, write-backs, in flight, clients, watches and
    /// their events (sent, dropped), workers by state, restarts, overloads, refusals, and the
    /// cache workers' evictions and shared store (Redis: workers connected and not, dropped
    /// writes, lookups missed while it was unreachable), asked of all of them at once, a second
    /// at most.
    func syncMetrics(_ sync: MetricsSync) async {
        var byDomain: [String: Int] = [:]
        for (key, count) in statistics.answers {
            byDomain[key.domain, default: 0] += count
            sync.count("monarch_answers_total", [("domain", key.domain), ("source", key.source), ("status", key.statusLabel)], total: count)
        }
        for (domain, count) in byDomain { sync.count("monarch_requests_total", [("domain", domain)], total: count) }
        for (pair, count) in statistics.failures {
            sync.count("monarch_failures_total", [("domain", pair.domain), ("code", pair.code)], total: count)
        }
        for (domain, count) in statistics.cacheHits { sync.count("monarch_cache_hits_total", [("domain", domain)], total: count) }
        for (domain, count) in statistics.cacheMisses { sync.count("monarch_cache_misses_total", [("domain", domain)], total: count) }
        for (domain, count) in statistics.hotHits { sync.count("monarch_hot_hits_total", [("domain", domain)], total: count) }
        if let hot = hotTierFigures {
            sync.gauge("monarch_hot_tier_entries", [], hot.entries)
            sync.gauge("monarch_hot_tier_bytes", [], hot.bytes)
            sync.count("monarch_hot_tier_evictions_total", total: hot.evictions)
        }
        sync.count("monarch_coalesced_joins_total", total: flights.joined)
        sync.count("monarch_write_backs_total", [("result", "stored")], total: cachePools.map(\.stores).reduce(0, +))
        sync.count("monarch_write_backs_total", [("result", "failed")], total: cachePools.map(\.storeFailures).reduce(0, +))
        sync.count("monarch_write_backs_total", [("result", "skipped")], total: cachePools.map(\.storesSkipped).reduce(0, +))
        sync.count("monarch_overloaded_total", total: overloadedRequests)
        sync.count("monarch_connections_refused_total", total: refusedConnections)
        sync.count("monarch_unresponsive_workers_total", total: unresponsiveWorkers)
        sync.count("monarch_late_heartbeats_total", total: heartbeatJudge.lateBeats)
        sync.count("monarch_forbidden_total", total: forbiddenRequests)
        sync.count("monarch_unauthorized_hellos_total", total: unauthorizedHellos)
        sync.gauge("monarch_requests_in_flight", [], requestsInFlight)
        sync.gauge("monarch_clients", [], clients.count)
        sync.gauge("monarch_watches", [], watches.count)
        sync.count("monarch_watch_events_total", [("result", "sent")], total: watchEventsSent)
        sync.count("monarch_watch_events_total", [("result", "dropped")], total: watchEventsDropped)
        sync.count("monarch_watchers_closed_total", total: watchersClosed)
        let report = statusReport()
        var states: [String: [StatusReport.Worker.State: Int]] = [:]
        var restarts: [String: Int] = [:]
        for worker in report.workers {
            states[worker.kind, default: [:]][worker.state, default: 0] += 1
            restarts[worker.kind, default: 0] += worker.restarts
        }
        for pool in report.pools {
            for state in [StatusReport.Worker.State.ready, .draining, .unresponsive, .starting, .restarting, .stopped] {
                sync.gauge("monarch_workers", [("kind", pool.kind), ("state", state.rawValue)], states[pool.kind]?[state] ?? 0)
            }
            sync.count("monarch_worker_restarts_total", [("kind", pool.kind)], total: restarts[pool.kind] ?? 0)
            sync.gauge("monarch_pool_failed", [("kind", pool.kind)], pool.state == .failed ? 1 : 0)
        }
        let answers = await cacheWorkerFigures()
        for pool in cachePools {
            var evictions = 0
            var connected = 0
            var unreachable = 0
            var droppedWrites = 0
            var unavailableReads = 0
            for (_, _, figures) in answers.filter({ $0.kind == pool.kind }) {
                if case .integer(let count)? = figures["evictions"] { evictions += Int(count) }
                if let store = StatusReport.Worker.Store(figures: figures) {
                    if store.state == .connected { connected += 1 } else { unreachable += 1 }
                    droppedWrites += store.droppedWrites
                    unavailableReads += store.unavailableReads
                }
            }
            sync.count("monarch_cache_evictions_total", [("kind", pool.kind)], total: evictions)
            if hasSharedCacheStore {
                sync.gauge("monarch_cache_store_workers", [("kind", pool.kind), ("state", "connected")], connected)
                sync.gauge("monarch_cache_store_workers", [("kind", pool.kind), ("state", "unreachable")], unreachable)
                sync.count("monarch_cache_store_dropped_writes_total", [("kind", pool.kind)], total: droppedWrites)
                sync.count("monarch_cache_store_unavailable_reads_total", [("kind", pool.kind)], total: unavailableReads)
            }
        }
    }
}
