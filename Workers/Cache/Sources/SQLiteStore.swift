import Logging
import MonarchLoop
import MonarchWire
import Synchronization

/// The cache's entries in one SQLite file, durable once acknowledged.
///
/// - **Durability.** WAL mode with `synchronous=FULL`: a write returns only once its
///   transaction committed and the WAL was synced, so it survives a crash of the process and
///   a loss of power.
/// - **Group commit.** Operations wait in a queue in front of the one connection, and run
///   one batch at a time on the loop's thread pool (never on the loop thread). A batch is
///   everything queued while the previous one ran: the reads queued before its first write,
///   then all its writes in one transaction, so many concurrent writes share one sync, then
///   the reads queued after the first write (so no read misses a write queued before it).
///   Each writer resumes once its transaction committed.
/// - **Unusable files.** A file that is not a database, is corrupt, or is this store's in a
///   shape it cannot read — found when opening (a cheap check of the header and schema, no
///   full integrity check) or later (`SQLITE_CORRUPT`/`SQLITE_NOTADB` on a query) — is logged
///   at error level, renamed to `PATH.corrupt-<unix time>` with its `-wal` and `-shm`, and
///   replaced by a fresh file. Reads that met it find nothing; writes that met it run again
///   on the fresh file.
/// - **Other applications' databases.** A valid SQLite database that is not this store's
///   (another application id, or tables without this store's id) is most likely a mistyped
///   path: opening fails (``SQLiteStoreError/Kind-swift.enum/foreignDatabase``) and the file
///   is neither changed nor moved aside. An empty database is initialised.
///
/// - **Private files.** The file is created `0600` (its `-wal` and `-shm` follow its mode),
///   and an existing file of this store, with its `-wal` and `-shm`, loses any group and other
///   permissions when opened, whatever the umask: cached bodies are not for other users.
///   ``createFolder(containing:)`` makes missing folders `0700`.
///
/// Every method may be called from any task.
public final class SQLiteStore: Sendable {
    /// The file.
    public let path: String
    /// How many entries the file held when it was opened.
    public let entriesAtOpen: Int
    /// The loop whose thread pool runs the SQLite calls.
    public let loop: EventLoop
    /// Operations (lookups, writes, invalidations, sweeps) waiting for the disk at most; more
    /// are answered unavailable at once (a lookup misses, a write is dropped), so a stalled
    /// disk holds a bounded number of bodies.
    public let maxWaiting: Int
    private let file: CacheFile
    private let queue = Mutex(Queue())

    private struct Queue {
        var waiting: [StoreOperation] = []
        var running = false
        var closed = false
    }

    /// Creates the folder that holds `path`, and its missing parents, each `0700` (only the
    /// worker's user may list or enter them) whatever the umask. Folders that exist are left
    /// as they are: their modes are the operator's choice.
    ///
    /// - Throws: ``SQLiteStoreError`` naming the folder that could not be created.
    public static func createFolder(containing path: String) throws(SQLiteStoreError) {
        try PrivateFiles.createFolder(containing: path)
    }

    /// Opens the file at `path` (creating it when missing; its folder must exist), replacing
    /// an unusable file by a fresh one as described above. Runs on `loop`'s thread pool.
    ///
    /// - Throws: ``SQLiteStoreError`` when no usable file can be had (no such folder, no
    ///   permission, another application's database at `path`, an unusable file that cannot
    ///   be moved aside, the loop shut down).
    public init(path: String, on loop: EventLoop, maxWaiting: Int = 4096, logger: Logger) async throws(SQLiteStoreError) {
        let file = CacheFile(path: path, logger: logger)
        let opened: Result<Int, SQLiteStoreError>
        do {
            opened = try await loop.runOnThreadPool { Result { () throws(SQLiteStoreError) in try file.open() } }
        } catch {
            throw SQLiteStoreError(.closed, "cannot open \(path): \(error)")
        }
        self.entriesAtOpen = try opened.get()
        self.path = path
        self.loop = loop
        self.maxWaiting = max(1, maxWaiting)
        self.file = file
    }

    /// The entry under `key`, or nil. An entry that cannot be read back (its headers are not
    /// a JSON object of strings) is deleted, logged, and is nil; the rest of the file stays.
    ///
    /// - Throws: ``SQLiteStoreError``: `cancelled` when the task was cancelled before the
    ///   read ran (it then never runs), `closed`, or what SQLite reported.
    public func entry(forKey key: String) async throws(SQLiteStoreError) -> CacheEntry? {
        switch try checked(await enqueue(.get(key)).outcome()) {
        case .entry(let entry): return entry
        default: return nil
        }
    }

    /// Keeps `entry` under `key`, replacing what was there; returns once it is committed.
    ///
    /// - Throws: ``SQLiteStoreError`` when it was not committed (the task's cancellation does
    ///   not stop a write once queued).
    public func put(_ entry: CacheEntry, under key: String) async throws(SQLiteStoreError) {
        _ = try checked(await enqueue(.put(entry, key: key)).outcome())
    }

    /// Deletes the entry under the target's key, or every entry whose key starts with its
    /// prefix (bytes compared exactly: `%` and `_` are not wildcards).
    ///
    /// - Returns: the keys deleted.
    /// - Throws: ``SQLiteStoreError`` when the deletion was not committed.
    public func remove(_ target: InvalidateMessage.Target) async throws(SQLiteStoreError) -> [String] {
        try keys(await enqueue(.remove(target)).outcome())
    }

    /// Makes the target's entries that are fresh at `nowMs` stale then (a soft purge, see
    /// ``CacheEntry/madeStale(at:)``): the entry under a key (and its variant slots), every
    /// entry whose key starts with a prefix (bytes compared exactly), or every entry tagged so.
    /// They stay in the file, and are swept `keepStale` after.
    ///
    /// - Returns: the keys changed (a variant slot's under its own key).
    /// - Throws: ``SQLiteStoreError`` when the change was not committed.
    public func markStale(_ target: InvalidateMessage.Target, at nowMs: Int64) async throws(SQLiteStoreError) -> [String] {
        try keys(await enqueue(.markStale(target, nowMs: nowMs)).outcome())
    }

    /// Deletes the entries whose freshness ended at or before `expiredByMs` (milliseconds
    /// since the epoch).
    ///
    /// - Returns: how many were deleted.
    public func deleteExpired(by expiredByMs: Int64) async throws(SQLiteStoreError) -> Int {
        switch try checked(await enqueue(.deleteExpired(by: expiredByMs)).outcome()) {
        case .count(let count): return count
        default: return 0
        }
    }

    /// How many entries the file holds now.
    public func count() async throws(SQLiteStoreError) -> Int {
        switch try checked(await enqueue(.count).outcome()) {
        case .count(let count): return count
        default: return 0
        }
    }

    /// Runs the operations queued so far, then closes the connection; later operations fail
    /// with `closed`. Calling it again does nothing more.
    public func close() async {
        _ = await enqueue(.close).outcome()
    }

    /// Runs `body` on a pool thread in the queue's turn, holding up the operations queued
    /// after it until it returns. For tests.
    func hold(_ body: @escaping @Sendable () -> Void) async {
        _ = await enqueue(.probe(body)).outcome()
    }

    /// Write transactions committed so far. For tests.
    var commits: Int { file.commits.load(ordering: .relaxed) }

    /// Operations queued and not yet taken by a batch. For tests.
    var waitingCount: Int { queue.withLock { $0.waiting.count } }

    /// Queues `work` at once (in the caller's order with other enqueues) and returns the
    /// operation to await. Starts a batch runner when none runs. Past ``maxWaiting`` waiting
    /// operations, anything but closing is refused at once.
    package func enqueue(_ work: StoreOperation.Work) -> StoreOperation {
        let operation = StoreOperation(work)
        enum Admission { case closed, full, queued, queuedFirst }
        let admission = queue.withLock { queue -> Admission in
            guard !queue.closed else { return .closed }
            if case .close = work {
                queue.closed = true
            } else if queue.waiting.count >= maxWaiting {
                return .full
            }
            queue.waiting.append(operation)
            guard !queue.running else { return .queued }
            queue.running = true
            return .queuedFirst
        }
        switch admission {
        case .closed: operation.finish(.failed(SQLiteStoreError(.closed, "\(path): the store is closed")))
        case .full:
            // As with a Redis store whose commands wait: a lookup misses, a write is dropped.
            operation.finish(.unavailable("\(maxWaiting) operations of \(path) already wait for the disk (--store-max-pending)"))
        case .queuedFirst: Task { await self.runBatches() }
        case .queued: break
        }
        return operation
    }

    /// Runs batch after batch until the queue is empty.
    private func runBatches() async {
        while true {
            let batch = queue.withLock { queue -> [StoreOperation]? in
                guard !queue.waiting.isEmpty else {
                    queue.running = false
                    return nil
                }
                defer { queue.waiting.removeAll(keepingCapacity: true) }
                return queue.waiting
            }
            guard let batch else { return }
            let operations = batch.filter { $0.start() }
            guard !operations.isEmpty else { continue }
            let work = operations.map(\.work)
            let file = self.file
            do {
                let outcomes = try await loop.runOnThreadPool { file.run(work) }
                for (operation, outcome) in zip(operations, outcomes) { operation.finish(outcome) }
            } catch {
                let failure = SQLiteStoreError(.closed, "\(path): \(error)")
                for operation in operations { operation.finish(.failed(failure)) }
            }
        }
    }

    private func keys(_ outcome: StoreOperation.Outcome) throws(SQLiteStoreError) -> [String] {
        switch try checked(outcome) {
        case .keys(let keys): return keys
        default: return []
        }
    }

    /// `outcome`, unless it is a failure (thrown) or a refusal of a full queue (thrown `busy`).
    private func checked(_ outcome: StoreOperation.Outcome) throws(SQLiteStoreError) -> StoreOperation.Outcome {
        switch outcome {
        case .failed(let error): throw error
        case .unavailable(let reason): throw SQLiteStoreError(.busy, reason)
        default: return outcome
        }
    }
}
