import Logging
import Monarch
import MonarchConfig
import MonarchLoop
import MonarchWire

/// A pool of cache workers: keys are sharded across them by rendezvous hashing on the
/// workers' names, so each key lives on one worker (reads, and write-back with `store`, go
/// there) and a worker joining or leaving moves only its share of keys. Invalidation goes to
/// every worker. It runs on ``CoordinatorActor``, as the coordinator does.
@CoordinatorActor
final class CachePool: RequestProvider, ResponseStoring {
    /// What changes as write-backs and invalidations happen.
    private struct State {
        var stores = 0
        var storeFailures = 0
        var storesSkipped = 0
        /// Recent invalidations, oldest first: a write-back from a trip that started before one
        /// of them may carry what it removed.
        var recentInvalidations: [(at: ContinuousClock.Instant, target: InvalidateMessage.Target)] = []
        /// When the newest invalidation folded away to keep `recentInvalidations` within its
        /// limit happened: a write-back of a trip that started before it is dropped, whatever its key.
        var foldedInvalidationsUntil: ContinuousClock.Instant?
        var onStored: (@CoordinatorActor (_ key: String, _ tags: [String], _ refreshed: Bool) -> Void)?
    }

    /// The cache workers, each request placed on the worker owning its key.
    nonisolated let pool: WorkerPool
    private let logger: Logger
    private var state = State()
    /// How long invalidations are remembered: as long as a trip may last (the longest route
    /// timeout) and its write-back may take; older trips have no write-back left to drop.
    nonisolated let invalidationMemory: Duration
    /// How many invalidations are remembered at most.
    nonisolated let invalidationLimit: Int
    /// The bounds on an entry's tags (`tagsPerEntry`, `tagBytes`).
    nonisolated let tagLimits: Configuration.Limits
    /// The coordinator's hot tier, which keeps the workers' hits and drops what write-backs
    /// change (see ``HotTier``); nil when off.
    nonisolated let hotTier: HotTierCell?
    /// Where invalidations are timed: the coordinator's clock.
    nonisolated var clock: MonotonicClock { pool.clock }
    /// Where the hot tier's answers are timed (wall-clock time, as the workers store entries).
    nonisolated let wallClock: WallClock

    /// A cache pool remembering at most `invalidationLimit` invalidations for
    /// `invalidationMemory` of `clock`, keeping tags within `tagLimits`, feeding `hotTier`
    /// with answers timed on `wallClock`.
    nonisolated init(
        kind: String, logger: Logger, clock: MonotonicClock, wallClock: WallClock,
        invalidationMemory: Duration, invalidationLimit: Int, tagLimits: Configuration.Limits = Configuration.Limits(),
        hotTier: HotTierCell? = nil
    ) {
        self.hotTier = hotTier
        self.wallClock = wallClock
        self.pool = WorkerPool(kind: kind, role: .cache, clock: clock)
        self.tagLimits = tagLimits
        self.logger = logger
        self.invalidationMemory = invalidationMemory
        self.invalidationLimit = max(1, invalidationLimit)
    }

    /// The workers' kind.
    nonisolated var kind: String { pool.kind }
    /// The workers' kind: the provider's name.
    nonisolated var name: String { pool.kind }

    /// Write-backs the workers acknowledged (the entry is kept, on disk for a file store).
    var stores: Int { state.stores }
    /// Write-backs a worker refused or was lost before acknowledging.
    var storeFailures: Int { state.storeFailures }
    /// Write-backs dropped because their key was invalidated while their trip was under way.
    var storesSkipped: Int { state.storesSkipped }
    /// Invalidations remembered now.
    var rememberedInvalidations: Int { state.recentInvalidations.count }
    /// Told about every write-back a worker acknowledged: its key, its tags, and whether it
    /// refreshed an entry the trip found in the cache.
    var onStored: (@CoordinatorActor (_ key: String, _ tags: [String], _ refreshed: Bool) -> Void)? {
        get { state.onStored }
        set { state.onStored = newValue }
    }

    /// Answers from the worker owning the key, outside any trip (see ``perform(_:on:)``).
    func perform(_ request: Request) async -> ProviderOutcome {
        await perform(request, on: nil)
    }

    /// Answers from the worker owning the key on behalf of `trip`, noting on the trip when a
    /// cache had an entry (its write-back is then a refresh, not a new entry); the hot tier
    /// keeps what it may of the answer.
    func perform(_ request: Request, on trip: WorkerPool.Trip?) async -> ProviderOutcome {
        let outcome = await performKeepingHot(request, on: trip)
        if case .response = outcome { trip?.notes.noteCachedEntry() }
        return outcome
    }

    /// Hands `response` to the worker owning the request's key, outside any trip (see
    /// ``store(_:for:on:)``).
    func store(_ response: Response, for request: Request) async {
        await store(response, for: request, on: nil)
    }

    /// Hands `response` to the worker owning the request's key, fresh for the response's TTL
    /// (the upstream's) or else the route's, at most the TTL the requester asked for, and
    /// tagged with the upstream's tags (``EntryTags``), as the variant of the key that the
    /// request's values of the varied headers pick (``SharingRules/storedVariant(of:for:)``).
    /// The write-back of `trip` is dropped when an invalidation of its key came after the trip
    /// started. Failures are logged: write-back never fails a request.
    func store(_ response: Response, for request: Request, on trip: WorkerPool.Trip?) async {
        guard let key = request.route.cacheKey else { return }
        let tripStart = trip?.start
        let notes = trip?.notes
        let refreshed = notes?.hadCachedEntry ?? false
        let tags = EntryTags.tags(of: response, within: tagLimits)
        // Until it ends, identical reads get the trip's answer (``HeldAnswers``).
        notes?.writeBackBegan()
        defer { notes?.writeBackEnded() }
        // The hot tier drops the key's entry, and refuses the reads under way, both when the
        // write-back begins and once it is over (kept, skipped or lost).
        hotTier?.tier.change(.key(key))
        defer { hotTier?.tier.change(.key(key)) }
        if let tripStart, invalidated(key, tags: tags, since: tripStart) {
            state.storesSkipped += 1
            logger.debug("not keeping \(key): it was invalidated while it was being fetched")
            return
        }
        guard let worker = pool.owner(of: key) else { return }
        let ttl = request.route.requestedTTL.map { asked in min(response.ttl ?? request.route.ttl ?? asked, asked) }
            ?? response.ttl ?? request.route.ttl
        let variant = SharingRules.storedVariant(of: response, for: request)
        switch await worker.exchange({
            .store(response.storeMessage(id: $0, key: key, ttl: ttl, tags: tags, variant: variant))
        }) {
        case .result?:
            state.stores += 1
            onStored?(key, tags, refreshed)
        case .failure(let failure)?:
            state.storeFailures += 1
            // A shared store that is down drops every write-back: the worker counts them
            // (status, metrics) and logs the outage once, so they are not logged one by one.
            let level: Logger.Level = failure.error.code == .storeUnavailable ? .debug : .warning
            logger.log(
                level: level,
                "\(worker.id) did not keep \(LogText.quoted(key)): \(LogText.sanitized(failure.error.code.rawValue)): \(LogText.sanitized(failure.error.message))")
        default:
            state.storeFailures += 1
            logger.warning("\(worker.id) was lost before it acknowledged keeping \(key)")
        }
    }

    /// What an invalidation did across the pool.
    struct InvalidationReport: Sendable {
        /// Entries removed, summed over the workers.
        var removed = 0
        /// Entries a soft purge made stale, summed over the workers.
        var markedStale = 0
        /// Workers that answered.
        var workers = 0
        /// Why the others did not.
        var failures: [String] = []
        /// The keys the workers reported dropping (or marking stale).
        var removedKeys: [String] = []
        /// Whether every worker that removed something listed its keys.
        var keysComplete = true
    }

    /// Whether an invalidation after `start` covers `key`, tagged `tags`: a write-back of a
    /// trip that started at `start` is then dropped, and its held answer is not handed out
    /// (``HeldAnswers``).
    func invalidated(_ key: String, tags: [String], since start: ContinuousClock.Instant) -> Bool {
        if let folded = state.foldedInvalidationsUntil, folded > start { return true }
        return state.recentInvalidations.contains { invalidation in
            guard invalidation.at > start else { return false }
            switch invalidation.target {
            case .key(let invalidatedKey): return invalidatedKey == key
            case .prefix(let prefix): return key.utf8.starts(with: prefix.utf8)
            case .tag(let tag): return tags.contains(tag)
            case .path, .pathPrefix: return false
            }
        }
    }

    /// Forgets the invalidations older than ``invalidationMemory`` at `now` (on ``clock``): no
    /// trip that started before them is still under way.
    func forgetOldInvalidations(now: ContinuousClock.Instant) {
        let memory = invalidationMemory
        state.recentInvalidations.removeAll { now - $0.at > memory }
        if let folded = state.foldedInvalidationsUntil, now - folded > memory {
            state.foldedInvalidationsUntil = nil
        }
    }

    /// Drops `target` from every connected worker (or, `soft`, has them mark its entries stale),
    /// and from write-backs of trips under way. Workers that registered once and are not
    /// connected now are reported as failures.
    func invalidate(_ target: InvalidateMessage.Target, soft: Bool = false) async -> InvalidationReport {
        let now = clock.now
        forgetOldInvalidations(now: now)
        state.recentInvalidations.append((now, target))
        if state.recentInvalidations.count > invalidationLimit {
            // Folded into one that covers every key: write-backs of older trips are dropped
            // (the cache misses once more), never kept when they may be stale.
            state.foldedInvalidationsUntil = state.recentInvalidations.removeFirst().at
        }
        var report = InvalidationReport()
        let absent = pool.knownShards.subtracting(pool.connected.map(\.shardName))
        for name in absent.sorted() {
            report.failures.append("\(name): not connected, so its entries (if it keeps a file) were not dropped")
        }
        await withTaskGroup(of: (String, WireMessage?).self) { group in
            for worker in pool.connected {
                group.addTask {
                    (worker.id, await worker.exchange { .invalidate(InvalidateMessage(id: $0, target: target, soft: soft)) })
                }
            }
            for await (id, answer) in group {
                switch answer {
                case .result(let result)?:
                    report.workers += 1
                    var removed = 0
                    if case .integer(let count)? = result.data?["removed"] { removed = Int(count) }
                    // A soft purge's entries made stale (a worker of an earlier version drops them instead,
                    // and says so as `removed`).
                    var marked = 0
                    if case .integer(let count)? = result.data?["markedStale"] { marked = Int(count) }
                    report.removed += removed
                    report.markedStale += marked
                    if case .array(let keys)? = result.data?["keys"] {
                        for case .string(let key) in keys { report.removedKeys.append(key) }
                    } else if removed + marked > 0 {
                        report.keysComplete = false
                    }
                case .failure(let failure)?:
                    report.failures.append("\(id): \(failure.error.code): \(failure.error.message)")
                default:
                    report.failures.append("\(id): lost before it answered")
                }
            }
        }
        return report
    }
}
