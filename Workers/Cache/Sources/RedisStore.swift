import Logging
import MonarchLoop
import MonarchWire
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The cache's entries in a Redis database that several cache workers — on one machine or
/// many, behind one coordinator or several — share.
///
/// - **One round trip per entry.** An entry is one Redis string, `monarch:e:KEY`, holding its
///   metadata and body (``RedisEntryCodec``): `SET … PX` stores both, `GET` reads both.
/// - **Expiry by Redis.** An entry with a TTL expires in Redis `ttl + keepStale` after it was
///   stored, so it is answered stale for the stale window (its fresh-until time travels in
///   its metadata) and then disappears by itself; one without a TTL does not expire. There is
///   nothing to sweep.
/// - **Tags** are indexed in one Redis set per tag (``RedisTagScripts``): a tagged entry is
///   stored and indexed by one script, and a tag invalidated by another, both one round trip.
/// - **Prefix invalidation by `SCAN`**, cursor by cursor (`MATCH` on the prefix with the glob
///   characters escaped, `COUNT 1000`), deleting what each step finds; never `KEYS`, which
///   blocks Redis. An index set per prefix would only serve prefixes that end on a path
///   segment (invalidation takes any byte prefix), and its members would outlive the entries
///   Redis expires by itself; a scan costs time in proportion to the database, but needs no
///   index that can go stale, and invalidation is rare next to reads.
/// - **Coherence.** Each store or invalidation is published on `monarch:changes:DB` (after
///   the change, on the same connection), and a second connection subscribes to it: every
///   other worker sharing the database drops the entry from its memory (``observeChanges(_:)``).
///   When that subscription is interrupted, changes may be missed: memory answers for a short
///   grace (``CacheProvider/memoryGrace``), then is emptied, and it is emptied again when the
///   subscription is back.
///   Each published change is a ``StoreChangeNote``: it carries an id and the coordinator it
///   was made through (``adopt(origin:)``), so that workers can forward other coordinators'
///   changes to their own for its watchers, each once.
/// - **Redis down is not Monarch down.** See ``RedisConnection``: while Redis cannot be
///   reached (or too many commands are waiting), operations end at once as `unavailable` —
///   a read misses, a write is dropped and counted in ``statusFigures``.
///
/// Every method may be called from any task; the connections live on the loop's thread.
public final class RedisStore: CacheStore, Sendable {
    /// The database.
    public let address: RedisAddress
    /// The loop whose thread runs hiredis.
    public let loop: EventLoop
    private let keepStaleMs: Int64
    private let channel: String
    /// Tells this worker's own notifications from other workers'.
    private let sender: String
    let connections: LoopBound<Connections>
    private let figures = Mutex(Figures())
    private let changeHandler = Mutex<(@Sendable (StoreChange) -> Void)?>(nil)
    /// The coordinator this worker's changes are made through (``adopt(origin:)``).
    private let origin = Mutex("")
    /// The number of this worker's last published change.
    private let published = Atomic<UInt64>(0)
    private let logger: Logger

    struct Connections {
        var commands: RedisConnection
        var notifications: RedisConnection
    }

    private struct Figures {
        var state = RedisConnection.Phase.connecting
        var subscribed = false
        var droppedWrites = 0
        var unavailableReads = 0
        var reconnects = 0
        var notifications = 0
        var backedOff = false
        var slowBackoffs = 0
    }

    static let entryPrefix: [UInt8] = Array("monarch:e:".utf8)

    /// Starts connecting to `address` (authenticating with `password` when given) on `loop`.
    /// Returns at once: a Redis that is down now is tried again with back-off, and meanwhile
    /// every read misses. Call ``close()`` before the loop shuts down.
    ///
    /// The process ignores SIGPIPE from then on (as Monarch's processes do anyway): hiredis
    /// writes with `write(2)`, and a Redis that went away must be an error, not the end of
    /// the process.
    ///
    /// - Throws: when the loop's timers cannot be created, or the loop has shut down.
    public init(
        address: RedisAddress, password: String?, settings: RedisSettings = RedisSettings(),
        keepStale: Duration, on loop: EventLoop, logger: Logger
    ) async throws {
        signal(SIGPIPE, SIG_IGN)
        self.address = address
        self.loop = loop
        self.logger = logger
        self.keepStaleMs = Int64(clamping: keepStale.wholeMilliseconds)
        self.channel = "monarch:changes:\(address.database)"
        var random = SystemRandomNumberGenerator()
        self.sender = String(random.next() as UInt64, radix: 16)
        let connections = try await loop.submit {
            LoopBound(
                Connections(
                    commands: RedisConnection(
                        address: address, password: password, role: "commands", forSubscriptions: false,
                        settings: settings, loop: loop, logger: logger),
                    notifications: RedisConnection(
                        address: address, password: password, role: "notifications", forSubscriptions: true,
                        settings: settings, loop: loop, logger: logger)),
                loop: loop)
        }
        self.connections = connections
        try await loop.submit { try self.startConnections() }
    }

    private func startConnections() throws {
        let commands = connections.value.commands
        let notifications = connections.value.notifications
        // The callbacks hold the store weakly, and the connections drop them when closed.
        commands.onPhaseChange = { [weak self] in self?.noteState() }
        commands.onLost = { [weak notifications] in
            // A Redis that stopped answering commands has most likely stopped pushing too.
            notifications?.drop(because: "the command connection was lost")
        }
        notifications.onConnected = { [weak self, weak notifications] in
            guard let self, let notifications else { return }
            if !notifications.subscribe(self.channel) {
                self.logger.error("cannot subscribe to \(self.channel) on \(self.address)")
            }
        }
        notifications.onLost = { [weak self] in
            self?.figures.withLock { $0.subscribed = false }
            // Memory answers for its grace, then empties; everything is dropped once the
            // subscription is back (`subscribe`, below).
            self?.report(.mayMissChanges)
        }
        notifications.onPush = { [weak self] reply in self?.received(reply) }
        try commands.start()
        try notifications.start()
    }

    // MARK: - CacheStore

    /// Queues `work` on the loop; see ``CacheStore/enqueue(_:)``.
    package func enqueue(_ work: StoreOperation.Work) -> StoreOperation {
        let operation = StoreOperation(work)
        loop.execute { self.run(operation) }
        return operation
    }

    /// Closes both connections; operations waiting for Redis end as `unavailable`.
    public func close() async {
        _ = try? await loop.submit {
            self.connections.value.commands.close()
            self.connections.value.notifications.close()
            self.noteState()
        }
    }

    /// `store` (the address), `storeState` (`connecting`, `connected`, `reconnecting`,
    /// `closed`), `storeSubscribed` (whether other workers' changes reach memory),
    /// `storeReconnects`, `storeDroppedWrites` (stores and invalidations dropped while Redis
    /// could not be reached), `storeUnavailableReads` (lookups that missed for that reason),
    /// `storeNotifications` (other workers' changes heard) and `storeSlowBackoffs` (times Redis
    /// was backed off as too slow, ``RedisSlowGuard``).
    package var statusFigures: [String: JSONValue] {
        let figures = self.figures.withLock { $0 }
        return [
            "store": .string(address.description), "storeState": .string(figures.state.rawValue),
            "storeSubscribed": .bool(figures.subscribed), "storeReconnects": .integer(Int64(figures.reconnects)),
            "storeDroppedWrites": .integer(Int64(figures.droppedWrites)),
            "storeUnavailableReads": .integer(Int64(figures.unavailableReads)),
            "storeNotifications": .integer(Int64(figures.notifications)),
            "storeSlowBackoffs": .integer(Int64(figures.slowBackoffs)),
        ]
    }

    /// Whether the command connection is up and Redis is not backed off as too slow.
    package var isReachable: Bool {
        figures.withLock { $0.state == .connected && !$0.backedOff }
    }

    /// Reports other workers' changes to `handler`; see ``CacheStore/observeChanges(_:)``.
    package func observeChanges(_ handler: @escaping @Sendable (StoreChange) -> Void) {
        changeHandler.withLock { $0 = handler }
    }

    // MARK: - Running operations (loop thread)

    private func run(_ operation: StoreOperation) {
        guard operation.start() else { return }
        let commands = connections.value.commands
        switch operation.work {
        case .get(let key):
            send(operation, [Array("GET".utf8), entryKey(key)]) { reply in
                switch reply {
                case .string(let bytes):
                    let entry = bytes.withUnsafeBytes(RedisEntryCodec.decode)
                    if entry == nil { self.logger.warning("\(self.address) holds an unreadable entry under \(key); a miss") }
                    return .entry(entry)
                default: return .entry(nil)
                }
            }
        case .put(let entry, let key) where entry.tags.isEmpty:
            var arguments = [Array("SET".utf8), entryKey(key), RedisEntryCodec.encode(entry)]
            if let expiry = expiryMs(of: entry) { arguments += [Array("PX".utf8), Array(String(expiry).utf8)] }
            send(operation, arguments) { _ in
                self.publish(.stored, .key(key), tags: entry.tags)
                return .done
            }
        case .put(let entry, let key):
            let tags = Array(Set(entry.tags)).sorted()
            let arguments =
                [Array("EVAL".utf8), Array(RedisTagScripts.store.utf8), Array(String(1 + tags.count).utf8), entryKey(key)]
                + tags.map(tagKey) + [RedisEntryCodec.encode(entry), Array((expiryMs(of: entry).map(String.init) ?? "").utf8), Array(key.utf8)]
            send(operation, arguments) { _ in
                self.publish(.stored, .key(key), tags: tags)
                return .done
            }
        case .remove(.key(let key)):
            // The key's variant slots go with it (``CacheVariants``).
            let keys = [key] + CacheVariants.slotKeys(of: key)
            send(operation, [Array("DEL".utf8)] + keys.map(entryKey)) { reply in
                let dropped = if case .integer(let count) = reply { count > 0 } else { false }
                self.publish(.invalidated, .key(key), changedSomething: dropped)
                return .keys(dropped ? [key] : [])
            }
        case .remove(.prefix(let prefix)):
            scan(prefix: prefix, cursor: "0", found: [], deleted: 0, operation: operation)
        case .remove(.tag(let tag)):
            let arguments = [
                Array("EVAL".utf8), Array(RedisTagScripts.invalidate.utf8), Array("1".utf8), tagKey(tag), Self.entryPrefix,
                Array(tag.utf8),
            ]
            send(operation, arguments) { reply in
                let keys = if case .array(let members) = reply { members.compactMap(\.text) } else { [String]() }
                self.publish(.invalidated, .tag(tag), changedSomething: !keys.isEmpty)
                return .keys(keys)
            }
        case .remove(.path), .remove(.pathPrefix), .markStale(.path, _), .markStale(.pathPrefix, _):
            operation.finish(.refused("the Redis store takes keys, prefixes and tags; paths are the coordinator's to resolve"))
        case .markStale(.key(let key), let nowMs):
            // The key's variant slots go with it, as with a removal.
            let keys = [key] + CacheVariants.slotKeys(of: key)
            send(operation, markStaleArguments(keys.map(entryKey), nowMs: nowMs)) { reply in
                let marked = Self.texts(of: reply)
                self.publish(.invalidated, .key(key), changedSomething: !marked.isEmpty)
                return .keys(marked)
            }
        case .markStale(.prefix(let prefix), let nowMs):
            scanMarkingStale(prefix: prefix, cursor: "0", nowMs: nowMs, marked: [], operation: operation)
        case .markStale(.tag(let tag), let nowMs):
            let arguments = [
                Array("EVAL".utf8), Array(RedisStaleScripts.tag.utf8), Array("1".utf8), tagKey(tag),
                Array(String(nowMs).utf8), Array(String(staleWindowMs).utf8), Self.entryPrefix, Array(tag.utf8),
            ]
            send(operation, arguments) { reply in
                let marked = Self.texts(of: reply)
                self.publish(.invalidated, .tag(tag), changedSomething: !marked.isEmpty)
                return .keys(marked)
            }
        case .deleteExpired:
            // Redis expires entries by itself.
            operation.finish(.count(0))
        case .count:
            send(operation, [Array("DBSIZE".utf8)]) { reply in
                if case .integer(let count) = reply { return .count(Int(count)) }
                return .count(0)
            }
        case .probe(let body):
            body()
            operation.finish(.done)
        case .close:
            commands.close()
            connections.value.notifications.close()
            noteState()
            operation.finish(.done)
        }
    }

    /// Sends one command for `operation`; its reply becomes the outcome through `outcome`
    /// (an error reply is `refused`; no reply, or no way to send, is `unavailable`).
    private func send(
        _ operation: StoreOperation, _ arguments: [[UInt8]], outcome: @escaping (RedisReply) -> StoreOperation.Outcome
    ) {
        let commands = connections.value.commands
        let sent = commands.send(arguments) { reply in
            switch reply {
            case .error(let message)?: operation.finish(.refused("Redis at \(self.address): \(message)"))
            case let reply?: operation.finish(outcome(reply))
            case nil: self.unavailable(operation, "the Redis store at \(self.address) went away before answering")
            }
        }
        if !sent { unavailable(operation, commands.unavailableReason) }
    }

    func unavailable(_ operation: StoreOperation, _ reason: String) {
        figures.withLock { figures in
            if operation.work.isWrite { figures.droppedWrites += 1 } else { figures.unavailableReads += 1 }
        }
        operation.finish(.unavailable(reason))
    }

    /// Marks the changes published from now on as made through the coordinator `origin`.
    package func adopt(origin: String) {
        self.origin.withLock { $0 = origin }
    }

    /// Publishes a change for the other workers (best effort: a worker that misses it empties
    /// its memory when its subscription comes back), as a ``StoreChangeNote``: an
    /// invalidation that dropped nothing is published too (other workers' memory may hold
    /// what Redis no longer does), marked as having changed nothing.
    func publish(
        _ event: SharedChangeMessage.Event, _ target: InvalidateMessage.Target, tags: [String] = [],
        changedSomething: Bool = true
    ) {
        let note = StoreChangeNote(
            sender: sender, sequence: published.add(1, ordering: .relaxed).newValue, origin: origin.withLock { $0 },
            event: event, target: target, tags: tags, changedSomething: changedSomething)
        guard let payload = note.payload else { return }
        // Beyond the limit on commands waiting: a change made must be heard by the other workers.
        connections.value.commands.send(
            [Array("PUBLISH".utf8), Array(channel.utf8), Array(payload.utf8)], beyondLimit: true) { _ in }
    }

    /// A message on the subscription: another worker's change, or the subscription's
    /// confirmation (memory is emptied then: changes made before it were not heard).
    private func received(_ reply: RedisReply) {
        guard case .array(let parts) = reply, parts.count == 3, let kind = parts[0].text else { return }
        switch kind {
        case "subscribe":
            figures.withLock { $0.subscribed = true }
            report(.mayHaveMissedChanges)
        case "message":
            guard let payload = parts[2].text, let note = StoreChangeNote(payload: payload), note.sender != sender else { return }
            report(.changed(note))
            figures.withLock { $0.notifications += 1 }
        default:
            break
        }
    }

    private func report(_ change: StoreChange) {
        changeHandler.withLock { $0 }?(change)
    }

    private func noteState() {
        let commands = connections.value.commands
        figures.withLock { figures in
            figures.state = commands.phase
            figures.reconnects = commands.reconnects
            figures.backedOff = commands.isBackedOff
            figures.slowBackoffs = commands.slowBackoffs
        }
    }

    // MARK: - Soft purges

    /// How long Redis keeps an entry made stale, in milliseconds from then: `keepStale`, at
    /// least 1 (`PX` takes no 0).
    var staleWindowMs: Int64 { max(1, keepStaleMs) }

    /// The `EVAL` of ``RedisStaleScripts/keys`` that makes the entries at `redisKeys` stale at
    /// `nowMs`.
    func markStaleArguments(_ redisKeys: [[UInt8]], nowMs: Int64) -> [[UInt8]] {
        [Array("EVAL".utf8), Array(RedisStaleScripts.keys.utf8), Array(String(redisKeys.count).utf8)] + redisKeys
            + [Array(String(nowMs).utf8), Array(String(staleWindowMs).utf8), Array(String(Self.entryPrefix.count).utf8)]
    }

    /// The texts of an array reply's bulk strings (the keys a script returns); none for any
    /// other reply.
    static func texts(of reply: RedisReply) -> [String] {
        if case .array(let members) = reply { members.compactMap(\.text) } else { [] }
    }

    // MARK: - Keys

    private func entryKey(_ key: String) -> [UInt8] {
        Self.entryPrefix + Array(key.utf8)
    }

    /// The Redis key of a tag's set: `monarch:t:TAG`.
    private func tagKey(_ tag: String) -> [UInt8] {
        Array("monarch:t:".utf8) + Array(tag.utf8)
    }

    /// How long Redis keeps `entry`, in milliseconds from now: its TTL and then `keepStale`
    /// (entries are put as they are stored); nil for an entry fresh for ever.
    private func expiryMs(of entry: CacheEntry) -> Int64? {
        guard let ttlMs = entry.ttlMs else { return nil }
        let (total, overflow) = ttlMs.addingReportingOverflow(keepStaleMs)
        return overflow ? nil : max(1, total)
    }
}
