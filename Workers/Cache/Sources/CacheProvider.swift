import Logging
import Monarch
import MonarchWire
import MonarchWorker
import Synchronization

/// The cache worker's provider, named `cache`: a bounded in-memory LRU in front of an
/// optional store — an SQLite file, or a Redis database that several workers share.
///
/// It answers `GET` and `HEAD` requests that carry a cache key (`route.cacheKey`): from
/// memory first, then from the file (a hit there is promoted into memory). A hit is a
/// response with source `cache`, its age, and `stale: true` once past its TTL — stale entries
/// are answers too, and the chain decides by policy whether to use them. An absent key, a
/// request with no key or another method is a miss. A hit carries the entry's TTL (nil when
/// it has none), so the coordinator can keep it when it revalidates the entry. With no file (memory-only) it behaves
/// the same minus persistence. A store that cannot be reached (Redis down, or backed off as
/// too slow) makes a lookup that memory cannot answer a miss, at once, and fails a `store` or `invalidate` (memory
/// drops the entry too) instead of making it wait.
///
/// When another worker sharing the store changes an entry, the store reports it and memory
/// drops its copy; when the store may have missed such reports, memory is emptied. While the
/// reports stop (Redis down), memory keeps answering what it holds for ``memoryGrace`` (5 s by
/// default), keeping nothing new, and is emptied once the grace has passed.
///
/// As ``CacheMaintenance`` it takes the coordinator's `store` (acknowledged once committed to
/// the file) and `invalidate` (by key or by exact byte prefix, in memory and in the file).
/// ``sweep()`` drops entries that expired more than `keepStale` ago from both.
///
/// Memory and file change together under one lock, in the callers' order, and a file read
/// that raced with a change to its key is not promoted, so memory never holds an entry the
/// file lost to a later write or invalidation. Thread-safe; every method may be called from
/// any task.
public final class CacheProvider: RequestProvider, CacheMaintenance, Sendable {
    /// The store behind memory; nil for a memory-only cache.
    package let store: (any CacheStore)?
    /// How long an expired entry is kept for stale answers before the sweep drops it.
    public let keepStale: Duration
    /// Where the time comes from.
    public let clock: WallClock
    private let keepStaleMs: Int64
    private let state: Mutex<State>
    private let forwarding = Mutex<Forwarding?>(nil)

    private struct Forwarding {
        var origin: String
        var send: @Sendable (SharedChangeMessage) -> Void
    }

    private struct State {
        var memory: MemoryCache
        /// When the store's notifications were interrupted (wall clock, ms), while they are:
        /// memory answers until ``memoryGrace`` after it, and keeps nothing new.
        var unheardSinceMs: Int64?
        /// File reads in flight, by key: a change to the key bumps the generation, and a read
        /// that sees its generation changed does not promote what it read.
        var reads: [CacheKey: ReadWatch] = [:]

        mutating func touch(_ key: String) {
            reads[CacheKey(key)]?.generation &+= 1
        }

        mutating func touch(prefix: String) {
            for key in reads.keys where key.hasBytePrefix(prefix) { reads[key]?.generation &+= 1 }
        }

        mutating func touchAll() {
            for key in reads.keys { reads[key]?.generation &+= 1 }
        }

        /// Drops from memory what `target` covers (a key with its variant slots, a prefix, a
        /// tag; nothing for a path, which the coordinator resolves), and makes the file reads in
        /// flight for it not promote what they read. Returns the keys dropped.
        mutating func drop(_ target: InvalidateMessage.Target) -> [String] {
            switch target {
            case .key(let key):
                let keys = [key] + CacheVariants.slotKeys(of: key)
                for key in keys { touch(key) }
                return keys.filter { memory.remove($0) != nil }
            case .prefix(let prefix):
                touch(prefix: prefix)
                return memory.removeAll(withPrefix: prefix)
            case .tag(let tag):
                touchAll()
                return memory.removeAll(taggedWith: tag)
            case .path, .pathPrefix:
                return []
            }
        }
    }

    private struct ReadWatch {
        var readers = 0
        var generation: UInt64 = 0
    }

    /// How long memory keeps answering after a shared store's notifications were interrupted
    /// (Redis down): other workers' changes are not heard meanwhile, so memory may hold what
    /// another coordinator has changed; past the grace it is emptied until they are heard again.
    public let memoryGrace: Duration
    private let memoryGraceMs: Int64

    /// The memory grace by default: 5 s.
    public static let defaultMemoryGrace = Duration.seconds(5)

    /// A cache keeping up to `memoryBytes` of entries in memory (see
    /// ``MemoryCache/cost(key:entry:)``) in front of `store` (nil: memory only), answering from
    /// memory for `memoryGrace` after the store's notifications were interrupted.
    package init(
        memoryBytes: Int, store: (any CacheStore)?, keepStale: Duration = .seconds(86_400), clock: WallClock = .system,
        memoryGrace: Duration = CacheProvider.defaultMemoryGrace
    ) {
        self.store = store
        self.keepStale = keepStale
        self.clock = clock
        self.memoryGrace = memoryGrace
        self.memoryGraceMs = Int64(clamping: memoryGrace.wholeMilliseconds)
        self.keepStaleMs = Int64(clamping: keepStale.wholeMilliseconds)
        self.state = Mutex(State(memory: MemoryCache(budgetBytes: memoryBytes)))
        store?.observeChanges { [weak self] change in
            self?.dropFromMemory(change)
            self?.forward(change)
        }
    }

    /// Drops from memory what another worker changed in the shared store (everything, when
    /// changes may have been missed); a store read under way for such a key is not promoted.
    /// When the store's notifications stop, memory answers for ``memoryGrace`` more.
    func dropFromMemory(_ change: StoreChange) {
        let target: InvalidateMessage.Target?
        switch change {
        case .changed(let note): target = note.target
        case .mayHaveMissedChanges: target = nil
        case .mayMissChanges:
            let now = clock.nowMs
            state.withLock { state in
                if state.unheardSinceMs == nil { state.unheardSinceMs = now }
            }
            return
        }
        state.withLock { state in
            if target == nil { state.unheardSinceMs = nil }
            switch target {
            case .key(let key)?:
                // A key's variant slots change with it.
                for key in [key] + CacheVariants.slotKeys(of: key) {
                    state.memory.remove(key)
                    state.touch(key)
                }
            case .prefix(let prefix)?:
                _ = state.memory.removeAll(withPrefix: prefix)
                state.touch(prefix: prefix)
            case .tag(let tag)?:
                _ = state.memory.removeAll(taggedWith: tag)
                state.touchAll()
            case .path?, .pathPrefix?:
                // Stores report keys, prefixes and tags only.
                break
            case nil:
                state.memory.removeAll { _, _ in true }
                state.touchAll()
            }
        }
    }

    /// Hands `change` to the coordinator's watchers (through ``forwardSharedChanges(origin:to:)``'s
    /// `send`) when it changed something and another coordinator made it: this coordinator
    /// told its watchers of its own changes already.
    func forward(_ change: StoreChange) {
        guard case .changed(let note) = change, note.changedSomething else { return }
        // A variant slot changes with its key, whose own note tells the watchers.
        if case .key(let key) = note.target, CacheVariants.isSlotKey(key) { return }
        guard let forwarding = forwarding.withLock({ $0 }), note.origin != forwarding.origin else { return }
        forwarding.send(SharedChangeMessage(
            change: note.id, event: note.event, target: note.target,
            tags: note.event == .stored && !note.tags.isEmpty ? note.tags : nil))
    }

    /// Starts forwarding the changes other coordinators make to the shared store: `send` gets
    /// each (any thread), and this worker's own changes are marked with `origin` (the
    /// coordinator's, from its `welcome`). A store no other worker shares hears nothing.
    public func forwardSharedChanges(origin: String, to send: @escaping @Sendable (SharedChangeMessage) -> Void) {
        store?.adopt(origin: origin)
        forwarding.withLock { $0 = Forwarding(origin: origin, send: send) }
    }

    /// `cache`.
    public var name: String { "cache" }

    /// What memory holds now: entries, the bytes they cost, and evictions so far.
    public var memoryUsage: (entries: Int, bytes: Int, evictions: Int) {
        state.withLock { ($0.memory.count, $0.memory.usedBytes, $0.memory.evictions) }
    }

    /// Answers from memory, then from the file. Never blocks the caller's thread: file reads
    /// run on the loop's thread pool. A cancelled task gets a `cancelled` failure. An entry
    /// that varies (``CacheVariants``) answers only a request whose values of its varied
    /// headers match (``Monarch/SharingRules/matches(storedVariant:headers:)``); otherwise the
    /// slot the request's values pick is tried, and a mismatch there is a miss.
    public func perform(_ request: Request) async -> ProviderOutcome {
        guard !Task.isCancelled else { return .failure(.cancelled) }
        guard request.isReadOnly else {
            return .miss(reason: "the cache answers GET and HEAD, not \(request.method)")
        }
        guard let key = request.route.cacheKey else {
            return .miss(reason: "the request has no cache key (no route gave it one)")
        }
        let entry: CacheEntry
        switch await lookUp(key) {
        case .found(let found): entry = found
        case .answered(let outcome): return outcome
        }
        guard let stored = entry.headers[CacheVariants.header] else { return .response(response(to: request, from: entry)) }
        if SharingRules.matches(storedVariant: stored, headers: request.headers) {
            return .response(response(to: request, from: entry))
        }
        let names = SharingRules.variedNames(of: stored)
        let wanted = SharingRules.variant(of: request.headers, on: names)
        switch await lookUp(CacheVariants.slotKey(key, variant: wanted)) {
        case .found(let variant) where variant.headers[CacheVariants.header] == wanted:
            return .response(response(to: request, from: variant))
        case .answered(let outcome) where outcome != .miss(reason: "not cached"):
            return outcome
        default:
            return .miss(reason: "not cached for this request's \(names.joined(separator: ", ")) (the entry varies on them)")
        }
    }

    /// Empties memory once its grace after the store's notifications stopped has passed: it
    /// may hold what other workers changed since.
    private func expireUnheardMemory(_ state: inout State, now: Int64) {
        guard let since = state.unheardSinceMs, now &- since >= memoryGraceMs, state.memory.count > 0 else { return }
        state.memory.removeAll { _, _ in true }
        state.touchAll()
    }

    /// What looking `key` up in memory, then in the store, found.
    private enum LookUp {
        /// The entry.
        case found(CacheEntry)
        /// No entry: the outcome to answer (a miss, or a failure).
        case answered(ProviderOutcome)
    }

    /// Looks `key` up in memory, then in the store (a store hit is promoted into memory unless
    /// the key changed meanwhile).
    private func lookUp(_ key: String) async -> LookUp {
        let now = clock.nowMs
        let (found, generation) = state.withLock { state -> (CacheEntry?, UInt64?) in
            expireUnheardMemory(&state, now: now)
            if let entry = state.memory.get(key) { return (entry, nil) }
            guard store != nil else { return (nil, nil) }
            state.reads[CacheKey(key), default: ReadWatch()].readers += 1
            return (nil, state.reads[CacheKey(key)]?.generation)
        }
        if let found { return .found(found) }
        guard let store, let generation else { return .answered(.miss(reason: "not cached")) }

        let read = await store.enqueue(.get(key)).outcome()
        state.withLock { state in
            let watchKey = CacheKey(key)
            let unchanged = state.reads[watchKey]?.generation == generation
            state.reads[watchKey]?.readers -= 1
            if state.reads[watchKey]?.readers == 0 { state.reads[watchKey] = nil }
            // Nothing new is kept while other workers' changes are not heard.
            if unchanged, state.unheardSinceMs == nil, case .entry(let entry?) = read, state.memory.peek(key) == nil {
                state.memory.put(key, entry)
            }
        }
        guard !Task.isCancelled else { return .answered(.failure(.cancelled)) }
        switch read {
        case .entry(let entry?):
            return .found(entry)
        case .failed(let error) where error.kind == .cancelled:
            return .answered(.failure(.cancelled))
        case .failed(let error):
            return .answered(.failure(ProviderFailure(code: .readFailed, message: error.message)))
        case .unavailable(let reason):
            return .answered(.miss(reason: "not in memory, and \(reason)"))
        case .refused(let reason):
            return .answered(.failure(ProviderFailure(code: .readFailed, message: reason)))
        default:
            return .answered(.miss(reason: "not cached"))
        }
    }

    private func response(to request: Request, from entry: CacheEntry) -> Response {
        let now = clock.nowMs
        var headers = Response.lowercasedHeaderNames(entry.headers)
        headers[CacheVariants.header] = nil
        return Response(
            // Entries stored by earlier versions may spell names otherwise.
            status: entry.status, headers: headers,
            body: request.method == "HEAD" ? .init() : entry.body,
            source: name, stale: !entry.isFresh(at: now), age: .milliseconds(entry.ageMs(at: now)),
            ttl: entry.ttlMs.map { .milliseconds($0) })
    }

    // MARK: - CacheMaintenance

    /// The memory cache's entries, bytes and evictions so far, and the store's figures (a
    /// Redis store's state and dropped writes).
    public var statusFigures: [String: JSONValue] {
        let usage = memoryUsage
        let figures: [String: JSONValue] = [
            "entries": .integer(Int64(usage.entries)), "memoryBytes": .integer(Int64(usage.bytes)),
            "evictions": .integer(Int64(usage.evictions)),
        ]
        return figures.merging(store?.statusFigures ?? [:]) { memory, _ in memory }
    }

    /// Keeps `response` under `key`, tagged `tags`, fresh for `response.ttl` (for ever when
    /// nil), stamped with the clock's time. In memory at once; with a file, returns once the entry is
    /// committed to it. Header names are kept in lowercase (and answered so, also for entries
    /// an earlier version stored otherwise). A response stored as `variant` (the `store`
    /// message's: what the request sent of the headers it varies on) is kept under `key` and
    /// in the slot its variant picks (``CacheVariants``), remembering the variant.
    ///
    /// - Throws: ``ProviderFailure`` `storeFailed` when the store did not take it, or
    ///   `storeUnavailable` when it could not be reached and the write was dropped (memory then
    ///   drops it too).
    public func store(
        _ response: Response, under key: String, tags: [String] = [], variant: String? = nil
    ) async throws(ProviderFailure) {
        var headers = Response.lowercasedHeaderNames(response.headers)
        headers[CacheVariants.header] = variant
        let entry = CacheEntry(
            status: response.status, headers: headers, body: response.body,
            storedAtMs: clock.nowMs,
            ttlMs: response.ttl.map { Int64(clamping: $0.wholeMilliseconds) }, tags: tags)
        let keys = [key] + (variant.map { [CacheVariants.slotKey(key, variant: $0)] } ?? [])
        let reachable = store?.isReachable ?? true
        let writes = state.withLock { state -> [StoreOperation] in
            keys.compactMap { key in
                // Not kept in memory alone while the store is unreachable (the store drops it),
                // nor while other workers' changes are not heard.
                if reachable, state.unheardSinceMs == nil { state.memory.put(key, entry) } else { state.memory.remove(key) }
                state.touch(key)
                return store?.enqueue(.put(entry, key: key))
            }
        }
        var failure: ProviderFailure?
        for write in writes {
            switch await write.outcome() {
            case .failed(let error):
                failure = failure ?? ProviderFailure(code: .storeFailed, message: "cannot keep \(key): \(error.message)")
            case .refused(let reason):
                failure = failure ?? ProviderFailure(code: .storeFailed, message: "cannot keep \(key): \(reason)")
            case .unavailable(let reason):
                failure = failure ?? ProviderFailure(code: .storeUnavailable, message: "dropped \(key): \(reason)")
            default: continue
            }
        }
        guard let failure else { return }
        state.withLock { state in
            for key in keys {
                state.memory.remove(key)
                state.touch(key)
            }
        }
        throw failure
    }

    /// Drops the entry under the target's key, every entry whose key starts with its prefix
    /// (compared byte for byte: `%` and `_` are ordinary characters), or every entry tagged with
    /// its tag, from memory and file. Paths are refused (`invalidRequest`): the coordinator
    /// resolves them.
    ///
    /// - Returns: the distinct keys dropped (a key held in memory and in the file counts once).
    /// - Throws: ``ProviderFailure`` `invalidateFailed` when the file could not be changed
    ///   or the store could not be reached (memory has dropped the entries already).
    public func invalidateKeys(_ target: InvalidateMessage.Target) async throws(ProviderFailure) -> [String] {
        guard target.isResolved else {
            throw ProviderFailure(code: .invalidRequest, message: "a cache worker invalidates keys, prefixes and tags; the coordinator resolves \(target.description)")
        }
        let (fromMemory, deletion) = state.withLock { state -> ([String], StoreOperation?) in
            let removed = state.drop(target)
            // A store drops a key's variant slots with it.
            return (removed, store?.enqueue(.remove(target)))
        }
        // A slot's entry is reported as its key's.
        var keys = Set(fromMemory.map { CacheKey(CacheVariants.baseKey(of: $0)) })
        switch await deletion?.outcome() {
        case .keys(let fromFile)?:
            keys.formUnion(fromFile.map { CacheKey(CacheVariants.baseKey(of: $0)) })
        case .failed(let error)?:
            throw ProviderFailure(code: .invalidateFailed, message: "cannot invalidate: \(error.message)")
        case .unavailable(let reason)?, .refused(let reason)?:
            throw ProviderFailure(code: .invalidateFailed, message: "cannot invalidate (memory dropped its copies): \(reason)")
        default:
            break
        }
        return keys.map(\.string).sorted()
    }

    /// A soft purge: makes the target's entries that are fresh now stale now, in memory and in
    /// the store (``CacheEntry/madeStale(at:)``), instead of dropping them: they are answered
    /// stale from then on (the chain revalidates them, or serves them stale where its policy
    /// allows) and swept `keepStale` later. A key covers its variant slots. Paths are refused
    /// (`invalidRequest`): the coordinator resolves them. A store read under way for a changed
    /// key is not promoted into memory.
    ///
    /// - Returns: the distinct keys made stale (a variant slot's under its key).
    /// - Throws: ``ProviderFailure`` `invalidateFailed` when the file could not be changed or the
    ///   store could not be reached (memory has dropped its copies then: it never answers fresh
    ///   what the store may still hold fresh, nor the reverse).
    public func markStaleKeys(_ target: InvalidateMessage.Target) async throws(ProviderFailure) -> [String] {
        guard target.isResolved else {
            throw ProviderFailure(code: .invalidRequest, message: "a cache worker marks keys, prefixes and tags stale; the coordinator resolves \(target.description)")
        }
        let now = clock.nowMs
        let (fromMemory, change) = state.withLock { state -> ([String], StoreOperation?) in
            let changed: [String]
            switch target {
            case .key(let key):
                let keys = [key] + CacheVariants.slotKeys(of: key)
                changed = keys.filter { state.memory.markStale($0, at: now) }
                for key in keys { state.touch(key) }
            case .prefix(let prefix):
                changed = state.memory.markStaleAll(withPrefix: prefix, at: now)
                state.touch(prefix: prefix)
            case .tag(let tag):
                changed = state.memory.markStaleAll(taggedWith: tag, at: now)
                state.touchAll()
            case .path, .pathPrefix:
                changed = []
            }
            return (changed, store?.enqueue(.markStale(target, nowMs: now)))
        }
        var keys = Set(fromMemory.map { CacheKey(CacheVariants.baseKey(of: $0)) })
        let failure: String?
        switch await change?.outcome() {
        case .keys(let fromStore)?:
            keys.formUnion(fromStore.map { CacheKey(CacheVariants.baseKey(of: $0)) })
            failure = nil
        case .failed(let error)?: failure = error.message
        case .unavailable(let reason)?, .refused(let reason)?: failure = reason
        default: failure = nil
        }
        if let failure {
            // Memory must not answer fresh, nor stale, what the store holds otherwise: it lets go.
            state.withLock { state in _ = state.drop(target) }
            throw ProviderFailure(code: .invalidateFailed, message: "cannot mark stale (memory dropped its copies): \(failure)")
        }
        return keys.map(\.string).sorted()
    }

    /// Drops, from memory and file, every entry that expired at least `keepStale` ago.
    ///
    /// - Returns: how many entries the file dropped (memory's count when there is no file).
    /// - Throws: ``ProviderFailure`` `sweepFailed` when the file could not be changed.
    @discardableResult
    public func sweep() async throws(ProviderFailure) -> Int {
        let now = clock.nowMs
        let keepStaleMs = self.keepStaleMs
        let (fromMemory, deletion) = state.withLock { state -> (Int, StoreOperation?) in
            let removed = state.memory.removeAll { _, entry in entry.isSweepable(at: now, keepStaleMs: keepStaleMs) }
            state.touchAll()
            let (expiredBy, overflow) = now.subtractingReportingOverflow(keepStaleMs)
            return (removed, overflow ? nil : store?.enqueue(.deleteExpired(by: expiredBy)))
        }
        guard let deletion else { return fromMemory }
        switch await deletion.outcome() {
        case .count(let count): return count
        case .failed(let error): throw ProviderFailure(code: .sweepFailed, message: error.message)
        case .refused(let reason): throw ProviderFailure(code: .sweepFailed, message: reason)
        default: return fromMemory
        }
    }
}
