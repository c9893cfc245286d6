#if canImport(Glibc)
import Glibc
#endif
import MonarchWire

extension Coordinator {
    /// What the coordinator is doing: the typed report `status` answers with.
    /// Uptimes are measured on ``clock``.
    func statusReport() -> StatusReport {
        let now = clock.now
        var workers: [StatusReport.Worker] = []
        var poolReports: [StatusReport.Pool] = []
        for kind in pools.keys.sorted() {
            let pool = pools[kind]!
            let supervised = supervisor?.poolState(kind)
            let localNames = Set(supervised?.slots.map(\.name) ?? [])
            for worker in pool.workers {
                let slot = supervised?.slots.first { $0.name == worker.id }
                let local = localNames.contains(worker.id)
                let state: StatusReport.Worker.State =
                    worker.isUnresponsive ? .unresponsive : worker.isDraining || slot?.leaving == true ? .draining : .ready
                let pid = slot?.pid.map { Int($0) } ?? worker.hello.pid
                workers.append(StatusReport.Worker(
                    id: worker.id, kind: kind, local: local, pid: pid, name: worker.hello.name, state: state,
                    inFlight: worker.outstanding.count, capacity: worker.capacity, forwarded: worker.forwarded,
                    answered: worker.answered, failures: worker.failures, forgotten: worker.forgotten,
                    restarts: slot?.restarts ?? 0, uptimeMs: Int((now - worker.registeredAt).wholeMilliseconds),
                    rssBytes: local ? pid.flatMap(Self.residentBytes) : nil))
            }
            // Local workers not registered now: starting, restarting, or stopped with their pool.
            let registered = Set(pool.workers.map(\.id))
            for slot in supervised?.slots ?? [] where !registered.contains(slot.name) {
                let state: StatusReport.Worker.State =
                    supervised?.failure != nil ? .stopped : slot.pid == nil ? .restarting : .starting
                let pid = slot.pid.map { Int($0) }
                workers.append(StatusReport.Worker(
                    id: slot.name, kind: kind, local: true, pid: pid, name: slot.name, state: state, inFlight: 0,
                    capacity: 0, forwarded: 0, answered: 0, failures: 0, forgotten: 0, restarts: slot.restarts,
                    uptimeMs: Int((now - slot.startedAt).wholeMilliseconds), rssBytes: pid.flatMap(Self.residentBytes)))
            }
            let live = pool.serving.count
            let desired = supervised?.launchesWorkers == true ? supervised?.desired : nil
            let state: StatusReport.Pool.State
            if let failure = supervised?.failure {
                poolReports.append(StatusReport.Pool(kind: kind, desired: desired, live: live, state: .failed, reason: failure))
                continue
            } else if scalingKinds.contains(kind) {
                state = .scaling
            } else if let desired {
                state = live >= desired ? .ok : .degraded
            } else {
                state = live > 0 ? .ok : .degraded
            }
            poolReports.append(StatusReport.Pool(kind: kind, desired: desired, live: live, state: state))
        }
        let domains = statistics.recent.keys.sorted().map { name in
            let figures = statistics.recent[name]!.summary(name: name)
            return StatusReport.Domain(
                name: name, requests: figures.requests, hits: figures.hits,
                hitRatio: figures.requests == 0 ? 0 : Double(figures.hits) / Double(figures.requests),
                p50Ms: figures.p50, p99Ms: figures.p99, p999Ms: figures.p999,
                hotHits: hotTier == nil ? nil : figures.hotHits)
        }
        let trips = flights.figures
        return StatusReport(
            version: MonarchRelease.version, uptimeMs: Int((now - startedAt).wholeMilliseconds), pools: poolReports,
            workers: workers, domains: domains, clients: clients.count, requestsInFlight: requestsInFlight,
            answersBySource: statistics.answersBySource, failuresByCode: statistics.failuresByCode,
            tripsStarted: trips.started, tripsJoined: trips.joined, joinersAskedAlone: trips.askedAlone,
            waitingForWorkers: pools.values.reduce(0) { $0 + $1.waitingCount }, overloaded: overloadedRequests,
            connectionsRefused: refusedConnections, slowReadersClosed: slowReadersClosed,
            idleClientsClosed: idleClientsClosed, unresponsiveWorkers: unresponsiveWorkers, draining: draining,
            refreshesStarted: flights.work.refreshes.started, backgroundRunning: flights.work.background.running,
            backgroundDropped: flights.work.background.dropped,
            invalidationsRemembered: cachePools.map(\.rememberedInvalidations).reduce(0, +),
            writeBacks: cachePools.map(\.stores).reduce(0, +),
            writeBackFailures: cachePools.map(\.storeFailures).reduce(0, +),
            watches: watches.count, watchEventsSent: watchEventsSent, watchEventsDropped: watchEventsDropped,
            sharedChanges: sharedChangesHeard, watchersClosed: watchersClosed,
            forbidden: forbiddenRequests, unauthorized: unauthorizedHellos, lateHeartbeats: heartbeatJudge.lateBeats,
            hotTier: hotTierFigures)
    }

    /// The resident memory of process `pid` in bytes (VmRSS), if it can be read.
    static func residentBytes(of pid: Int) -> Int? {
        guard let file = fopen("/proc/\(pid)/status", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard text.hasPrefix("VmRSS:") else { continue }
            let kilobytes = text.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    }
}

extension Coordinator {
    /// Whether a cache pool keeps its entries in a shared store (Redis), whose state `status`
    /// then asks the cache workers for.
    var hasSharedCacheStore: Bool {
        configuration.workers.contains { pool in
            if case .cache(let cache) = pool.settings { return cache.usesRedis }
            return false
        }
    }

    /// The figures of every connected cache worker's `status`, asked of all of them at once,
    /// each within a second (a silent one is left out).
    func cacheWorkerFigures() async -> [(kind: String, worker: String, figures: [String: JSONValue])] {
        let workers = cachePools.flatMap { pool in pool.pool.connected.map { (pool.kind, $0) } }
        return await withTaskGroup(of: (kind: String, worker: String, figures: [String: JSONValue])?.self) { group in
            for (kind, worker) in workers {
                group.addTask {
                    guard case .result(let result)? = await worker.exchange(timeoutMs: 1000, { .status(StatusMessage(id: $0)) }),
                        let figures = result.data
                    else { return nil }
                    return (kind, worker.id, figures)
                }
            }
            var answers: [(kind: String, worker: String, figures: [String: JSONValue])] = []
            for await answer in group { if let answer { answers.append(answer) } }
            return answers
        }
    }

    /// ``statusReport()`` with each connected cache worker's shared store as it reports it
    /// (asked all at once, a second at most; one that does not answer shows none).
    func statusReportWithStores() async -> StatusReport {
        var stores: [String: StatusReport.Worker.Store] = [:]
        for answer in await cacheWorkerFigures() {
            if let store = StatusReport.Worker.Store(figures: answer.figures) { stores[answer.worker] = store }
        }
        var report = statusReport()
        for index in report.workers.indices { report.workers[index].store = stores[report.workers[index].id] }
        return report
    }
}
