import MonarchConfig

/// What reloading a running coordinator's configuration (SIGHUP) changes, and what it leaves
/// for a restart.
///
/// Applied: the routes, the domains (over the pools the coordinator has), the limits it reads
/// as it goes, who may purge over HTTP (`http.purgeFrom`, asked at each `PURGE`), and the
/// number of local workers in each pool. Left as they run, and named in
/// ``needsRestart``: the listeners, the secrets, the metrics address, a pool's settings other
/// than its count, pools added or removed, and the limits fixed when the coordinator started
/// (``limitsFixedAtStart``).
struct ReloadPlan: Equatable {
    /// The configuration in force once the reload is applied.
    var configuration: Configuration
    /// The pools whose local worker count changes, with the new count.
    var scales: [String: Int]
    /// What the new file changes that only a restart applies, one phrase each.
    var needsRestart: [String]

    /// The limits a running coordinator does not take up again, by their key in `limits:`.
    static var limitsFixedAtStart: [(key: String, keyPath: WritableKeyPath<Configuration.Limits, Int>)] {
        [
            ("handshakes", \.handshakes), ("handshakesPerPeer", \.handshakesPerPeer),
            ("backgroundTasks", \.backgroundTasks), ("invalidations", \.invalidations),
            ("tagsPerEntry", \.tagsPerEntry), ("tagBytes", \.tagBytes), ("watchesPerClient", \.watchesPerClient),
            ("sharedChanges", \.sharedChanges), ("hotTier", \.hotTierBytes), ("hotTierEntry", \.hotTierEntryBytes),
            ("routeCache", \.routeCache), ("restarts", \.restarts),
        ]
    }
    /// The durations among ``limitsFixedAtStart``'s kind.
    static var durationsFixedAtStart: [(key: String, keyPath: WritableKeyPath<Configuration.Limits, Duration>)] {
        [("heartbeat", \.heartbeat), ("restartWindow", \.restartWindow)]
    }

    /// The plan for moving from `running` to `file`.
    ///
    /// - Throws: ``ConfigError`` when `file` cannot be applied at all: a domain names a
    ///   provider kind the coordinator has no pool for, or the longest request timeout grows.
    init(running: Configuration, file: Configuration) throws(ConfigError) {
        var next = running
        var needsRestart: [String] = []
        if file.listen != running.listen { needsRestart.append("listen") }
        if file.token != running.token || file.adminToken != running.adminToken
            || file.workerToken != running.workerToken || file.metricsToken != running.metricsToken
        {
            needsRestart.append("auth")
        }
        if file.metrics != running.metrics { needsRestart.append("metrics") }

        // The cache pools remember an invalidation for as long as the longest trip may run, a
        // length fixed at start: a longer one could write back an answer read before it.
        guard file.longestRequestTimeout <= running.longestRequestTimeout else {
            throw ConfigError(
                keyPath: "limits.timeout", problem: "raises the longest request timeout (limits.timeout or a route's "
                    + "timeout) from \(running.longestRequestTimeout) to \(file.longestRequestTimeout): invalidations "
                    + "are remembered for the longest one set at start, so this needs a restart")
        }
        let kinds = Set(running.domains.flatMap(\.providers) + running.workers.map(\.kind))
        for (index, domain) in file.domains.enumerated() {
            for kind in domain.providers where !kinds.contains(kind) {
                throw ConfigError(
                    keyPath: "domains.\(domain.name)", problem: "names the provider kind \(kind), which this running "
                        + "coordinator has no pool for (domain \(index + 1)); restart to add a pool")
            }
        }
        next.domains = file.domains
        next.routes = file.routes
        next.http = file.http

        var scales: [String: Int] = [:]
        for (index, pool) in running.workers.enumerated() {
            guard let wanted = file.workers.first(where: { $0.kind == pool.kind }) else {
                needsRestart.append("workers.\(pool.kind) (removed)")
                continue
            }
            if wanted.settings != pool.settings || wanted.logLevel != pool.logLevel {
                needsRestart.append("workers.\(pool.kind) (settings other than count)")
            }
            if wanted.count != pool.count {
                scales[pool.kind] = wanted.count
                next.workers[index].count = wanted.count
            }
        }
        for pool in file.workers where !running.workers.contains(where: { $0.kind == pool.kind }) {
            needsRestart.append("workers.\(pool.kind) (a new pool)")
        }

        var limits = file.limits
        for (key, keyPath) in Self.limitsFixedAtStart where limits[keyPath: keyPath] != running.limits[keyPath: keyPath] {
            needsRestart.append("limits.\(key)")
            limits[keyPath: keyPath] = running.limits[keyPath: keyPath]
        }
        for (key, keyPath) in Self.durationsFixedAtStart where limits[keyPath: keyPath] != running.limits[keyPath: keyPath] {
            needsRestart.append("limits.\(key)")
            limits[keyPath: keyPath] = running.limits[keyPath: keyPath]
        }
        next.limits = limits

        self.configuration = next
        self.scales = scales
        self.needsRestart = needsRestart
    }
}
