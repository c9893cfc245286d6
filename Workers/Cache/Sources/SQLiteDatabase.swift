import CSQLite
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One connection to the cache's SQLite file, with the file checked and its statements
/// prepared.
///
/// Opening first checks the file cheaply, reading only: it must be a database (reading the
/// header finds a file that is not) and either empty or this store's (its application id,
/// with exactly this store's `entries` table). A database of something else is refused and
/// left exactly as it was. Only then does it set WAL mode and `synchronous=FULL` (a
/// committed transaction survives power loss) and, in an empty file, create the schema. It
/// never runs a full integrity check, so opening a large file stays fast; corruption further
/// in shows up as `SQLITE_CORRUPT` on the query that meets it.
///
/// Not thread-safe (opened with `SQLITE_OPEN_NOMUTEX`): ``SQLiteStore`` uses it from one
/// thread-pool job at a time.
final class SQLiteDatabase {
    let path: String
    private(set) var handle: OpaquePointer?
    /// Why the files could not all be kept to their owner (``PrivateFiles/restrict(_:)``),
    /// for the caller to log; empty when they are.
    private(set) var permissionProblems: [String] = []
    private var statements: [String: SQLiteStatement] = [:]
    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()

    /// The columns of `entries`, in order. Small columns come before the body, so reading the
    /// times never walks a large body's overflow pages.
    static let columns = ["key", "status", "stored_at_ms", "ttl_ms", "headers", "body"]
    /// Marks files this store created (`MNRC`).
    static let applicationID: Int64 = 0x4D4E_5243
    static let schema = """
        CREATE TABLE entries (
            key TEXT PRIMARY KEY NOT NULL,
            status INTEGER NOT NULL,
            stored_at_ms INTEGER NOT NULL,
            ttl_ms INTEGER,
            headers TEXT NOT NULL,
            body BLOB NOT NULL
        );
        CREATE INDEX entries_by_expiry ON entries (stored_at_ms + ttl_ms) WHERE ttl_ms IS NOT NULL;
        PRAGMA application_id = \(applicationID);
        PRAGMA user_version = 1;
        """
    /// The entries' tags, one row per tag and key, dropped with their entry (a trigger covers
    /// every `DELETE`; ``put(_:under:)`` replaces them itself, since a `REPLACE` fires no delete
    /// trigger). Added to files of earlier versions when they are opened.
    static let tagSchema = """
        CREATE TABLE IF NOT EXISTS entry_tags (
            tag TEXT NOT NULL,
            key TEXT NOT NULL,
            PRIMARY KEY (tag, key)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS entry_tags_by_key ON entry_tags (key);
        CREATE TRIGGER IF NOT EXISTS entries_drop_tags AFTER DELETE ON entries
        BEGIN
            DELETE FROM entry_tags WHERE key = old.key;
        END;
        """

    /// Opens (creating when missing, `0600`) and checks the file at `path`; once the file is
    /// known to be this store's, takes group and other permissions away from it and its
    /// `-wal` and `-shm` (see ``PrivateFiles``).
    ///
    /// - Throws: ``SQLiteStoreError``; ``SQLiteStoreError/isUnusableFile`` tells a file that is
    ///   not a database, is corrupt or is this store's in a shape it cannot read from other
    ///   failures (another application's database, a folder that does not exist, no
    ///   permission, …).
    static func open(_ path: String) throws(SQLiteStoreError) -> SQLiteDatabase {
        let database = SQLiteDatabase(path: path)
        do {
            try database.connect()
            return database
        } catch {
            database.close()
            throw error
        }
    }

    private init(path: String) {
        self.path = path
    }

    private func connect() throws(SQLiteStoreError) {
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        // SQLite would create it with the umask's leave; its -wal and -shm copy its mode.
        PrivateFiles.createDatabaseIfMissing(path)
        let result = sqlite3_open_v2(path, &handle, flags, nil)
        guard result == SQLITE_OK else { throw error(result, "open") }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 5000)
        // Nothing is written before the file is known to be this store's (or empty): a
        // mistyped path to another application's database must leave it as it was.
        let needsSchema = try checkOwnership()
        permissionProblems = PrivateFiles.restrict(path)
        let mode = try text("PRAGMA journal_mode = WAL")
        guard mode.lowercased() == "wal" else {
            throw SQLiteStoreError(.sqlite(code: SQLITE_CANTOPEN), "\(path): cannot use WAL mode (journal mode stays \(mode))")
        }
        try execute("PRAGMA synchronous = FULL")
        if needsSchema { try createSchema() }
        try execute(Self.tagSchema)
    }

    /// Checks, reading only, that the file is this store's or an empty database.
    ///
    /// - Returns: whether it is empty, so the schema is still to be created.
    /// - Throws: `SQLITE_NOTADB` (from SQLite) for a file that is no database;
    ///   ``SQLiteStoreError/Kind-swift.enum/foreignDatabase`` for a database of something else
    ///   (another application id, or objects but not this store's id);
    ///   ``SQLiteStoreError/Kind-swift.enum/wrongSchema`` for a file with this store's id whose
    ///   `entries` table is not the one this version reads.
    private func checkOwnership() throws(SQLiteStoreError) -> Bool {
        // The first statement reads the header: a file that is no database fails here.
        let applicationID = try integer("PRAGMA application_id")
        let objects = try integer("SELECT count(*) FROM sqlite_schema")
        if applicationID == 0 && objects == 0 { return true }
        guard applicationID == Self.applicationID else {
            let owner = applicationID == 0 ? "it has tables but no application id" : "application_id \(applicationID)"
            throw SQLiteStoreError(
                .foreignDatabase,
                "\(path) is an SQLite database that belongs to something else (\(owner)), not a Monarch cache file; it was left untouched: check the path")
        }
        var columns: [String] = []
        let info = try statement("PRAGMA table_info(entries)")
        defer { info.reset() }
        while try info.step() { columns.append(info.text(1)) }
        guard columns == Self.columns else {
            throw SQLiteStoreError(
                .wrongSchema, "\(path) is a Monarch cache file whose entries table has columns \(columns), not \(Self.columns)")
        }
        return false
    }

    private func createSchema() throws(SQLiteStoreError) {
        try execute("BEGIN IMMEDIATE")
        do {
            // Another connection may have created it meanwhile.
            guard try integer("SELECT count(*) FROM sqlite_schema") == 0 else {
                try execute("COMMIT")
                _ = try checkOwnership()
                return
            }
            try execute(Self.schema)
            try execute("COMMIT")
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Finalises the statements and closes the connection. Safe to call twice.
    func close() {
        for statement in statements.values { statement.finalize() }
        statements.removeAll()
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    deinit { close() }

    // MARK: - Entries

    /// What ``entry(forKey:)`` found under a key.
    enum Lookup {
        case found(CacheEntry)
        case missing
        /// A row this store cannot have written (its headers are not a JSON object of
        /// strings): one bad row, not a bad file; the caller drops it.
        case unreadable(reason: String)
    }

    /// The entry under `key`: found, missing, or a row that cannot be read back.
    func entry(forKey key: String) throws(SQLiteStoreError) -> Lookup {
        let select = try statement("SELECT status, stored_at_ms, ttl_ms, headers, body FROM entries WHERE key = ?1")
        defer { select.reset() }
        select.bind(1, text: key)
        guard try select.step() else { return .missing }
        let headers = select.text(3)
        let decoded: [String: String]
        do {
            decoded = try decoder.decode([String: String].self, from: Data(headers.utf8))
        } catch {
            return .unreadable(reason: "its headers are not a JSON object of strings")
        }
        return .found(CacheEntry(
            status: Int(select.int64(0)), headers: decoded, body: select.blob(4), storedAtMs: select.int64(1),
            ttlMs: select.isNull(2) ? nil : select.int64(2), tags: try tags(ofKey: key)))
    }

    /// The tags of the entry under `key`, in byte order.
    private func tags(ofKey key: String) throws(SQLiteStoreError) -> [String] {
        let select = try statement("SELECT tag FROM entry_tags WHERE key = ?1 ORDER BY tag")
        defer { select.reset() }
        select.bind(1, text: key)
        var tags: [String] = []
        while try select.step() { tags.append(select.text(0)) }
        return tags
    }

    /// Replaces the tags of the entry under `key` by `tags`. Inside the caller's transaction.
    private func replaceTags(ofKey key: String, with tags: [String]) throws(SQLiteStoreError) {
        let clear = try statement("DELETE FROM entry_tags WHERE key = ?1")
        clear.bind(1, text: key)
        do {
            _ = try clear.step()
            clear.reset()
        } catch {
            clear.reset()
            throw error
        }
        guard !tags.isEmpty else { return }
        let insert = try statement("INSERT OR IGNORE INTO entry_tags (tag, key) VALUES (?1, ?2)")
        defer { insert.reset() }
        for tag in tags {
            insert.bind(1, text: tag)
            insert.bind(2, text: key)
            _ = try insert.step()
            insert.reset()
        }
    }

    /// Deletes every entry tagged `tag` (their other tags go with them); returns their keys.
    func delete(tag: String) throws(SQLiteStoreError) -> [String] {
        let delete = try statement("DELETE FROM entries WHERE key IN (SELECT key FROM entry_tags WHERE tag = ?1) RETURNING key")
        defer { delete.reset() }
        delete.bind(1, text: tag)
        var keys: [String] = []
        while try delete.step() { keys.append(delete.text(0)) }
        return keys
    }

    /// Keeps `entry` under `key`, replacing what was there. Inside the caller's transaction.
    func put(_ entry: CacheEntry, under key: String) throws(SQLiteStoreError) {
        let insert = try statement("""
            INSERT OR REPLACE INTO entries (key, status, stored_at_ms, ttl_ms, headers, body)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            """)
        defer { insert.reset() }
        let headers: Data
        do {
            headers = try encoder.encode(entry.headers)
        } catch {
            throw SQLiteStoreError(.sqlite(code: SQLITE_MISUSE), "cannot encode the headers of \(key): \(error)")
        }
        insert.bind(1, text: key)
        insert.bind(2, int64: Int64(entry.status))
        insert.bind(3, int64: entry.storedAtMs)
        insert.bind(4, int64: entry.ttlMs)
        insert.bind(5, text: String(decoding: headers, as: UTF8.self))
        insert.bind(6, blob: entry.body)
        _ = try insert.step()
        insert.reset()
        try replaceTags(ofKey: key, with: entry.tags)
    }

    /// Deletes the entry under `key` and its variant slots (``CacheVariants``); returns `[key]`
    /// when there was one, else `[]`.
    func delete(key: String) throws(SQLiteStoreError) -> [String] {
        let delete = try statement("DELETE FROM entries WHERE key = ?1 OR (key >= ?2 AND key <= ?3)")
        defer { delete.reset() }
        delete.bind(1, text: key)
        delete.bind(2, text: CacheVariants.slotKey(key, slot: 0))
        delete.bind(3, text: CacheVariants.slotKey(key, slot: CacheVariants.slots - 1))
        _ = try delete.step()
        return sqlite3_changes(handle) > 0 ? [key] : []
    }

    /// Deletes every entry whose key starts with the bytes of `prefix`, exactly: keys compare
    /// as bytes (the BINARY collation) against the range [prefix, prefix's successor), so `%`
    /// and `_` mean themselves. Returns the keys deleted.
    func delete(prefix: String) throws(SQLiteStoreError) -> [String] {
        let statement: SQLiteStatement
        if let upper = Self.successor(ofPrefix: Array(prefix.utf8)) {
            statement = try self.statement("DELETE FROM entries WHERE key >= ?1 AND key < ?2 RETURNING key")
            statement.bind(1, text: prefix)
            statement.bind(2, textBytes: upper)
        } else {
            statement = try self.statement("DELETE FROM entries RETURNING key")
        }
        defer { statement.reset() }
        var keys: [String] = []
        while try statement.step() { keys.append(statement.text(0)) }
        return keys
    }

    /// The smallest byte string above every string that starts with `prefix`; nil when there
    /// is none (an empty prefix, or one of only 0xFF bytes, which UTF-8 never holds).
    static func successor(ofPrefix prefix: [UInt8]) -> [UInt8]? {
        var bytes = prefix
        while let last = bytes.last {
            if last < 0xFF {
                bytes[bytes.count - 1] = last + 1
                return bytes
            }
            bytes.removeLast()
        }
        return nil
    }

    /// Deletes the entries that expired at or before `expiredByMs`; returns how many.
    func deleteExpired(by expiredByMs: Int64) throws(SQLiteStoreError) -> Int {
        let delete = try statement("DELETE FROM entries WHERE ttl_ms IS NOT NULL AND stored_at_ms + ttl_ms <= ?1")
        defer { delete.reset() }
        delete.bind(1, int64: expiredByMs)
        _ = try delete.step()
        return Int(sqlite3_changes(handle))
    }

    /// How many entries the file holds.
    func count() throws(SQLiteStoreError) -> Int {
        Int(try integer("SELECT count(*) FROM entries"))
    }

    // MARK: - Transactions and plumbing

    func begin() throws(SQLiteStoreError) { try execute("BEGIN IMMEDIATE") }
    func commit() throws(SQLiteStoreError) { try execute("COMMIT") }

    /// Rolls back the open transaction, if any; errors are ignored (there may be none open).
    func rollback() {
        if let handle, sqlite3_get_autocommit(handle) == 0 { try? execute("ROLLBACK") }
    }

    /// Runs `sql`, one or more statements with no result rows wanted.
    func execute(_ sql: String) throws(SQLiteStoreError) {
        var message: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard result == SQLITE_OK else {
            let code = handle.map { sqlite3_extended_errcode($0) } ?? result
            let detail = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
            throw SQLiteStoreError(.sqlite(code: code), "\(path): \(sql.prefix(40)): \(detail) (code \(code))")
        }
    }

    private func integer(_ sql: String) throws(SQLiteStoreError) -> Int64 {
        let query = try statement(sql)
        defer { query.reset() }
        return try query.step() ? query.int64(0) : 0
    }

    private func text(_ sql: String) throws(SQLiteStoreError) -> String {
        let query = try statement(sql)
        defer { query.reset() }
        return try query.step() ? query.text(0) : ""
    }

    func statement(_ sql: String) throws(SQLiteStoreError) -> SQLiteStatement {
        if let prepared = statements[sql] { return prepared }
        let prepared = try SQLiteStatement(sql, in: self)
        statements[sql] = prepared
        return prepared
    }

    /// The error for result `code` of `operation`, with SQLite's own words when it has some.
    func error(_ code: Int32, _ operation: String) -> SQLiteStoreError {
        let extended = handle.map { sqlite3_extended_errcode($0) } ?? code
        let reason = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        return SQLiteStoreError(.sqlite(code: extended == 0 ? code : extended), "\(path): \(operation): \(reason) (code \(extended))")
    }
}
