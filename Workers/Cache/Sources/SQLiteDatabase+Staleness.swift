import MonarchWire

// Soft purges in the file: entries made stale in place, never deleted (the sweep drops them
// `keepStale` after, as any expired entry).
extension SQLiteDatabase {
    /// Makes the target's entries that are fresh at `nowMs` stale then, as
    /// ``CacheEntry/madeStale(at:)`` does: their TTL becomes their age (at least 0). A key
    /// covers its variant slots (``CacheVariants``); a prefix is compared byte for byte; a tag
    /// covers the entries tagged so. Inside the caller's transaction.
    ///
    /// - Returns: the keys changed, slots under their own keys.
    func markStale(_ target: InvalidateMessage.Target, at nowMs: Int64) throws(SQLiteStoreError) -> [String] {
        // The freshness rule of CacheEntry.isFresh, in SQL (?1 is now).
        let fresh = """
            (ttl_ms IS NULL OR (stored_at_ms <= ?1 + \(CacheEntry.clockSkewToleranceMs) AND max(0, ?1 - stored_at_ms) < ttl_ms))
            """
        let update = "UPDATE entries SET ttl_ms = max(0, ?1 - stored_at_ms) WHERE \(fresh) AND "
        let statement: SQLiteStatement
        switch target {
        case .key(let key):
            statement = try self.statement(update + "(key = ?2 OR (key >= ?3 AND key <= ?4)) RETURNING key")
            statement.bind(2, text: key)
            statement.bind(3, text: CacheVariants.slotKey(key, slot: 0))
            statement.bind(4, text: CacheVariants.slotKey(key, slot: CacheVariants.slots - 1))
        case .prefix(let prefix):
            if let upper = Self.successor(ofPrefix: Array(prefix.utf8)) {
                statement = try self.statement(update + "key >= ?2 AND key < ?3 RETURNING key")
                statement.bind(2, text: prefix)
                statement.bind(3, textBytes: upper)
            } else {
                statement = try self.statement(update + "1 RETURNING key")
            }
        case .tag(let tag):
            statement = try self.statement(update + "key IN (SELECT key FROM entry_tags WHERE tag = ?2) RETURNING key")
            statement.bind(2, text: tag)
        case .path, .pathPrefix:
            // The coordinator resolves paths; the provider refuses them before they get here.
            return []
        }
        defer { statement.reset() }
        statement.bind(1, int64: nowMs)
        var keys: [String] = []
        while try statement.step() { keys.append(statement.text(0)) }
        return keys
    }
}
