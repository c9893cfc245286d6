import Monarch
import MonarchConfig
import MonarchLoop
import MonarchTransport
import MonarchWire

/// The coordinator's hot tier: a bounded in-memory cache of the cache workers' answers, so
/// that a hit is answered in the coordinator, as ready-to-send bytes, without a trip to a
/// cache worker. The cache workers stay the store of record; a miss here is always safe (the
/// request goes to them as before).
///
/// What it holds (``keep(_:for:ticket:askedAtMs:)``): only what a cache worker answered a
/// `GET` with, fresh, that any caller of the key would get from it —
/// ``SharingRules/mayServeToEveryCaller(_:for:)``: never private, no-store, Set-Cookie, a Vary
/// (or route keyed headers) the key does not hold, nor an answer to a request that may not
/// share (credentials off a public route, conditions, unknown headers). Bodies of at most
/// ``entryLimitBytes``, ``budgetBytes`` in all, headers included (least recently used evicted
/// first: ``ByteBudgetLRU``).
///
/// Freshness and age are the cache worker's: an entry remembers when the worker stored it
/// (the age the worker answered, counted back from when it was asked) and its TTL, answers
/// only while fresh, with its age at the time of the answer, and is dropped once stale (the
/// worker then answers it stale, and the chain's policy decides, as before).
///
/// Coherent: every change the coordinator passes on or hears (an invalidation, a write-back,
/// another coordinator's change to a shared store) goes through ``change(_:)``, which drops what
/// it covers and moves the tier's epoch on; an answer read from a cache worker under a
/// ``beginRead()`` ticket older than a change that covers its key is not kept, so a read that
/// raced a change never brings the old answer back.
///
/// Bounded: ``budgetBytes`` (`limits.hotTier`), ``entryLimitBytes`` (`limits.hotTierEntry`);
/// the changes remembered for reads under way at most ``changeMemory`` (past it, every read
/// under way is refused, as after a change to everything), forgotten whenever no read is under
/// way. A value type: the coordinator keeps it on its loop.
struct HotTier {
    /// One answer held (a class: a hit takes it without copying its parts).
    final class Entry: Sendable {
        /// The `response` message, ready to frame for any request id and age.
        let prepared: PreparedResponse
        /// When the cache worker stored it (wall clock, ms since the epoch), as far as the
        /// coordinator can tell: never later than it did.
        let storedAtMs: Int64
        /// How long it stays fresh; nil for ever.
        let ttlMs: Int64?
        /// Its tags (``EntryTags``, unbounded: an invalidation by tag drops at least what the
        /// cache workers drop).
        let tags: [String]
        /// What a relayed request's hit needs of it (HTTP's freshness, its HTTP head), worked
        /// out when it was kept.
        let relayed: RelayedHotHit.Form
        /// After when it is not answered however fresh (a shared store's entries, which other
        /// coordinators change: see ``sharedStoreHoldMs``); nil for no such limit.
        let heldUntilMs: Int64?
        /// Its body as a relayed hit sends it, uncopied, when it is at least
        /// ``sharedBodyMinimum`` bytes; nil for a smaller one (copied with the head instead).
        let sharedBody: SharedBytes?

        /// An entry of these parts.
        init(
            prepared: PreparedResponse, storedAtMs: Int64, ttlMs: Int64?, tags: [String], relayed: RelayedHotHit.Form,
            heldUntilMs: Int64?, sharedBody: SharedBytes? = nil
        ) {
            self.prepared = prepared
            self.storedAtMs = storedAtMs
            self.ttlMs = ttlMs
            self.tags = tags
            self.relayed = relayed
            self.heldUntilMs = heldUntilMs
            self.sharedBody = sharedBody
        }

        /// Its age at `nowMs`, as the cache worker counts it (never negative).
        func ageMs(at nowMs: Int64) -> Int64 { max(0, nowMs &- storedAtMs) }

        /// Whether it may answer at `nowMs`: fresh as the cache worker judges it
        /// (``CacheEntry``'s rule, clock skew included) and within its hold.
        func isUsable(at nowMs: Int64) -> Bool {
            if let heldUntilMs, nowMs >= heldUntilMs { return false }
            guard let ttlMs else { return true }
            guard storedAtMs <= nowMs &+ 1000 else { return false }
            return ageMs(at: nowMs) < ttlMs
        }
    }

    /// The bytes counted for every entry beyond its key, headers and body: the LRU slot and
    /// dictionary entry, the prepared response and its templates' arrays.
    static let entryOverhead = 640

    /// The smallest body a relayed hit sends without copying it (``Entry/sharedBody``): below
    /// it, copying the body beside the head costs less; the wire's frames draw the same line.
    static let sharedBodyMinimum = MessageCodec.uncopiedBodyMinimum

    /// The bytes the entries may cost together; 0 holds nothing.
    var budgetBytes: Int { entries.budgetBytes }
    /// The largest body held.
    let entryLimitBytes: Int
    /// How long an entry of a shared store (Redis) is answered at most after it was read:
    /// another coordinator's change reaches this one through the cache workers' notifications,
    /// and while those are interrupted the workers' own memory answers for their memory grace
    /// at most; nil when the store is no one else's.
    let sharedStoreHoldMs: Int64?
    /// Changes remembered at most for reads under way.
    let changeMemory: Int

    private var entries: ByteBudgetLRU<Entry>
    /// Moves on at each change.
    private var epoch: UInt64 = 0
    /// The epoch of the last change to each key, while reads are under way.
    private var changedAt: [ByteExactKey: UInt64] = [:]
    /// The epoch of the last change that may have covered any key (a prefix, a tag, everything).
    private var everythingChangedAt: UInt64 = 0
    /// Reads from the cache workers under way (tickets given and not returned).
    private var readsUnderWay = 0

    /// Hits answered since start.
    private(set) var hits = 0
    /// Answers kept since start.
    private(set) var kept = 0
    /// Answers not kept because a change since their read covered them.
    private(set) var refusedAfterChange = 0

    /// A hot tier of `budgetBytes` (0: off) holding bodies of up to `entryLimitBytes`,
    /// holding a shared store's entries at most `sharedStoreHoldMs`, remembering at most
    /// `changeMemory` changes for the reads under way.
    init(budgetBytes: Int, entryLimitBytes: Int, sharedStoreHoldMs: Int64? = nil, changeMemory: Int = 4096) {
        self.entries = ByteBudgetLRU(budgetBytes: budgetBytes)
        self.entryLimitBytes = entryLimitBytes
        self.sharedStoreHoldMs = sharedStoreHoldMs
        self.changeMemory = max(1, changeMemory)
    }

    /// The hot tier `limits` describe (`hotTier`, `hotTierEntry`, `invalidations` changes
    /// remembered), holding a shared store's entries for `sharedStoreHoldMs` at most.
    init(limits: Configuration.Limits, sharedStoreHoldMs: Int64?) {
        self.init(
            budgetBytes: limits.hotTierBytes, entryLimitBytes: limits.hotTierEntryBytes,
            sharedStoreHoldMs: sharedStoreHoldMs, changeMemory: limits.invalidations)
    }

    /// Whether it may hold anything at all.
    var isOn: Bool { budgetBytes > 0 && sharedStoreHoldMs != 0 }
    /// Entries held.
    var count: Int { entries.count }
    /// What they cost.
    var usedBytes: Int { entries.usedBytes }
    /// Entries evicted to make room since start.
    var evictions: Int { entries.evictions }

    /// The answer held under `key` if it may answer at `nowMs`, with its age; a stale one is
    /// dropped. Counted as a hit when answered.
    mutating func answer(for key: String, nowMs: Int64) -> (prepared: PreparedResponse, ageMs: UInt64)? {
        guard let (entry, ageMs) = usableEntry(for: key, nowMs: nowMs) else { return nil }
        hits += 1
        return (entry.prepared, ageMs)
    }

    /// The answer held under `key` for a relayed request (``RelayedHotHit``) of a route whose
    /// TTL is `defaultLifetime`, if it may answer at `nowMs` and is fresh by HTTP's rules,
    /// with its form and its age; a stale one is dropped. Counted as a hit when answered.
    mutating func relayedAnswer(
        for key: String, nowMs: Int64, defaultLifetime: Duration?
    ) -> (prepared: PreparedResponse, form: RelayedHotHit.Form, ageMs: UInt64, sharedBody: SharedBytes?)? {
        guard let (entry, ageMs) = usableEntry(for: key, nowMs: nowMs) else { return nil }
        let form = entry.relayed.defaultLifetime == defaultLifetime
            ? entry.relayed
            : RelayedHotHit.Form(of: entry.prepared.message, ageMs: ageMs, nowMs: nowMs, defaultLifetime: defaultLifetime)
        guard form.isFresh(heldMs: ageMs) else { return nil }
        hits += 1
        return (entry.prepared, form, ageMs, entry.sharedBody)
    }

    /// The entry held under `key` if it may answer at `nowMs`, with its age then; a stale one
    /// is dropped.
    private mutating func usableEntry(for key: String, nowMs: Int64) -> (Entry, UInt64)? {
        guard let entry = entries.get(key) else { return nil }
        guard entry.isUsable(at: nowMs) else {
            entries.remove(key)
            return nil
        }
        return (entry, UInt64(entry.ageMs(at: nowMs)))
    }

    /// A ticket for a read from a cache worker about to be sent: hand it back with the answer
    /// to ``keep(_:for:ticket:askedAtMs:)``, or to ``endRead()`` when there is none.
    mutating func beginRead() -> UInt64 {
        readsUnderWay += 1
        return epoch
    }

    /// Ends a read begun with ``beginRead()`` that brought nothing to keep.
    mutating func endRead() {
        readsUnderWay -= 1
        if readsUnderWay == 0 { forgetChanges() }
    }

    /// Keeps `response`, a cache worker's answer to `request` read under `ticket` (asked at
    /// `askedAtMs`, wall clock), when it may answer every caller of its key, fits, is fresh, and
    /// no change since the ticket covers it; ends the read. Returns whether it was kept.
    @discardableResult
    mutating func keep(_ response: Response, for request: Request, ticket: UInt64, askedAtMs: Int64) -> Bool {
        defer { endRead() }
        guard isOn, request.method == "GET", let key = request.route.cacheKey, !response.stale,
            SharingRules.mayServeToEveryCaller(response, for: request)
        else { return false }
        guard response.content.count <= entryLimitBytes else { return false }
        guard !changed(key, since: ticket) else {
            refusedAfterChange += 1
            return false
        }
        let ttlMs = response.ttl.map { Int64(clamping: $0.wholeMilliseconds) }
        let ageMs = Int64(clamping: response.age?.wholeMilliseconds ?? 0)
        let message = response.message(id: 0)
        let entry = Entry(
            prepared: PreparedResponse(message), storedAtMs: askedAtMs &- ageMs, ttlMs: ttlMs,
            tags: EntryTags.tags(of: response, within: Self.everyTag),
            relayed: RelayedHotHit.Form(
                of: message, ageMs: UInt64(max(0, ageMs)), nowMs: askedAtMs, defaultLifetime: request.route.ttl),
            heldUntilMs: sharedStoreHoldMs.map { askedAtMs &+ $0 },
            sharedBody: response.content.count >= Self.sharedBodyMinimum ? SharedBytes.holding(response.content.bytes) : nil)
        guard entry.isUsable(at: askedAtMs) else { return false }
        // The body counted as bytes (shared by the message, its raw frame and the relayed hit)
        // and, when its JSON frame's form is held (a small body), as base64; the headers as
        // given and as encoded.
        let headerBytes = response.headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        let base64Held = response.content.count < MessageCodec.uncopiedBodyMinimum ? response.content.base64Count : 0
        let cost = Self.entryOverhead + key.utf8.count + 2 * headerBytes + entry.relayed.head.count
            + (entry.relayed.cacheStatusLineStart?.count ?? 0) + response.content.count + base64Held
        guard entries.put(key, entry, cost: cost) else { return false }
        kept += 1
        return true
    }

    /// Drops what `target` covers (a path target, which the coordinator resolves before it
    /// gets here, drops everything), and refuses the answers of reads begun before it.
    mutating func change(_ target: CacheTarget) {
        epoch &+= 1
        switch target {
        case .key(let key):
            entries.remove(key)
            changedAt[ByteExactKey(key)] = epoch
            if changedAt.count > changeMemory { changeEverything() }
        case .prefix(let prefix):
            entries.removeAll(withPrefix: prefix)
            everythingChangedAt = epoch
        case .tag(let tag):
            entries.removeAll { _, entry in entry.tags.contains { $0.utf8.elementsEqual(tag.utf8) } }
            everythingChangedAt = epoch
        case .path, .pathPrefix:
            changeEverything()
        }
    }

    /// Drops everything, and refuses the answers of every read begun before now.
    mutating func changeEverything() {
        epoch &+= 1
        entries.removeAll { _, _ in true }
        changedAt.removeAll()
        everythingChangedAt = epoch
    }

    /// Whether a change since `ticket` may cover `key`.
    private func changed(_ key: String, since ticket: UInt64) -> Bool {
        everythingChangedAt > ticket || (changedAt[ByteExactKey(key)] ?? 0) > ticket
    }

    /// Forgets the changes remembered: no read under way can need them.
    private mutating func forgetChanges() {
        guard !changedAt.isEmpty else { return }
        changedAt.removeAll(keepingCapacity: changedAt.count <= 64)
    }

    /// Limits under which ``EntryTags`` keeps every tag.
    private static let everyTag: Configuration.Limits = {
        var limits = Configuration.Limits()
        limits.tagsPerEntry = .max
        limits.tagBytes = .max
        return limits
    }()
}
