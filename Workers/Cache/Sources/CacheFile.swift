import Logging
import MonarchWire
import Synchronization

/// The cache's file behind ``SQLiteStore``: its one connection, reopened on a fresh file when
/// the file turns out unusable, and the running of a batch of queued operations.
///
/// Touched by one thread-pool job at a time (the store's queue guarantees it), hence
/// `@unchecked Sendable`.
final class CacheFile: @unchecked Sendable {
    let path: String
    private let logger: Logger
    private var database: SQLiteDatabase?
    /// Write transactions committed so far (tests check that concurrent writes share one).
    let commits = Atomic<Int>(0)

    init(path: String, logger: Logger) {
        self.path = path
        self.logger = logger
    }

    /// Opens the file; one that is unusable is logged, moved aside and replaced by a fresh one.
    /// Another application's database is not unusable: it is refused and left alone.
    ///
    /// - Returns: how many entries the file holds.
    /// - Throws: ``SQLiteStoreError`` when no usable file can be opened, or the file is another
    ///   application's database.
    func open() throws(SQLiteStoreError) -> Int {
        do {
            return try opened().count()
        } catch where error.isUnusableFile {
            // Corruption found by the count (below the schema) is handled like any other.
            replaceUnusableFile(after: error)
            return try opened().count()
        }
    }

    /// The open connection, opening the file first when there is none (at start, or after a
    /// replacement failed). An unusable file is moved aside and replaced once.
    private func opened() throws(SQLiteStoreError) -> SQLiteDatabase {
        if let database { return database }
        let fresh: SQLiteDatabase
        do {
            fresh = try openDatabase()
        } catch where error.isUnusableFile {
            let aside = try UnusableFile.moveAside(path)
            logger.error("the cache file \(path) is unusable (\(error.message)); moved it aside to \(aside) and started a fresh file")
            fresh = try openDatabase()
        }
        database = fresh
        return fresh
    }

    /// Opens the file, logging at warning level what kept it or its companions readable by
    /// others.
    private func openDatabase() throws(SQLiteStoreError) -> SQLiteDatabase {
        let database = try SQLiteDatabase.open(path)
        for problem in database.permissionProblems { logger.warning("\(problem)") }
        return database
    }

    /// Closes the connection to a file found unusable while in use, moves the file aside and
    /// opens a fresh one. When that fails, the failure is logged and the next operation tries
    /// again.
    private func replaceUnusableFile(after error: SQLiteStoreError) {
        database?.close()
        database = nil
        do {
            let aside = try UnusableFile.moveAside(path)
            logger.error("the cache file \(path) is unusable (\(error.message)); moved it aside to \(aside) and started a fresh file")
            database = try openDatabase()
        } catch {
            logger.error("the cache file \(path) is unusable and could not be replaced: \(error.message)")
        }
    }

    func close() {
        database?.close()
        database = nil
    }

    // MARK: - Batches

    /// Runs one batch in a way consistent with the order of `work`: the reads queued before
    /// its first write, then every write in one transaction (group commit, so one sync to
    /// disk acknowledges them all), then the reads queued after the first write. A read thus
    /// never misses a write queued before it; a read queued between two writes also sees the
    /// later one, which is fine, as that write was queued while the read still waited. A write
    /// batch that fails is retried one write per transaction, so one bad write does not fail
    /// the others; one that meets an unusable file runs again on the fresh file.
    ///
    /// - Returns: the outcomes, in the order of `work`.
    func run(_ work: [StoreOperation.Work]) -> [StoreOperation.Outcome] {
        var outcomes = [StoreOperation.Outcome](repeating: .done, count: work.count)
        let firstWrite = work.firstIndex { $0.isWrite } ?? work.endIndex
        for index in work.indices[..<firstWrite] { outcomes[index] = read(work[index]) }
        let writes = work.indices[firstWrite...].filter { work[$0].isWrite }
        if !writes.isEmpty {
            let results = commit(writes.map { work[$0] }, splitOnFailure: true)
            for (index, outcome) in zip(writes, results) { outcomes[index] = outcome }
        }
        for index in work.indices[firstWrite...] where !work[index].isWrite { outcomes[index] = read(work[index]) }
        return outcomes
    }

    private func read(_ work: StoreOperation.Work) -> StoreOperation.Outcome {
        do {
            switch work {
            case .get(let key): return .entry(try entry(forKey: key))
            case .count: return .count(try opened().count())
            case .probe(let body):
                body()
                return .done
            case .close:
                close()
                return .done
            default: return .done
            }
        } catch where error.isUnusableFile {
            replaceUnusableFile(after: error)
            // The entries went with the old file.
            if case .get = work { return .entry(nil) }
            return .count(0)
        } catch {
            return .failed(error)
        }
    }

    /// The entry under `key`, or nil. A row that cannot be read back is deleted (logged at
    /// warning level) and is a miss; the other entries of the file stay.
    private func entry(forKey key: String) throws(SQLiteStoreError) -> CacheEntry? {
        let database = try opened()
        switch try database.entry(forKey: key) {
        case .found(let entry):
            return entry
        case .missing:
            return nil
        case .unreadable(let reason):
            do {
                _ = try database.delete(key: key)
                logger.warning("the cache file \(path) held an unreadable entry under \(key) (\(reason)); deleted it")
            } catch where error.isUnusableFile {
                throw error
            } catch {
                logger.warning("the cache file \(path) holds an unreadable entry under \(key) (\(reason)); cannot delete it: \(error.message)")
            }
            return nil
        }
    }

    private func commit(_ writes: [StoreOperation.Work], splitOnFailure: Bool) -> [StoreOperation.Outcome] {
        var lastError: SQLiteStoreError?
        for _ in 0..<2 {
            do {
                return try commitOnce(writes)
            } catch where error.isUnusableFile {
                replaceUnusableFile(after: error)
                lastError = error
            } catch {
                lastError = error
                break
            }
        }
        if splitOnFailure && writes.count > 1 {
            return writes.flatMap { commit([$0], splitOnFailure: false) }
        }
        let failure = lastError ?? SQLiteStoreError(.closed, "\(path): not open")
        return writes.map { _ in .failed(failure) }
    }

    private func commitOnce(_ writes: [StoreOperation.Work]) throws(SQLiteStoreError) -> [StoreOperation.Outcome] {
        let database = try opened()
        try database.begin()
        do {
            var outcomes: [StoreOperation.Outcome] = []
            outcomes.reserveCapacity(writes.count)
            for write in writes {
                switch write {
                case .put(let entry, let key):
                    try database.put(entry, under: key)
                    outcomes.append(.done)
                case .remove(.key(let key)):
                    outcomes.append(.keys(try database.delete(key: key)))
                case .remove(.prefix(let prefix)):
                    outcomes.append(.keys(try database.delete(prefix: prefix)))
                case .remove(.tag(let tag)):
                    outcomes.append(.keys(try database.delete(tag: tag)))
                case .markStale(let target, let nowMs):
                    outcomes.append(.keys(try database.markStale(target, at: nowMs)))
                case .deleteExpired(let expiredBy):
                    outcomes.append(.count(try database.deleteExpired(by: expiredBy)))
                default:
                    outcomes.append(.done)
                }
            }
            try database.commit()
            commits.add(1, ordering: .relaxed)
            return outcomes
        } catch {
            database.rollback()
            throw error
        }
    }
}
