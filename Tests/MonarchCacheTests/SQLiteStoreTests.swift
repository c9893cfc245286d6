import CSQLite
import Foundation
@testable import MonarchCache
import MonarchLoop
import Testing

@Suite struct SQLiteStoreTests {
    @Test func anEntryComesBackWholeAfterReopening() async throws {
        try await withCacheFixture { fixture in
            let entry = CacheEntry(
                status: 203, headers: ["content-type": "application/json", "x-é": "ü"], body: Data([0, 1, 2, 255]),
                storedAtMs: 1_750_000_000_123, ttlMs: 60_000)
            let empty = CacheEntry(status: 204, storedAtMs: 5)
            let store = try await fixture.openStore()
            #expect(store.entriesAtOpen == 0)
            try await store.put(entry, under: "users/1")
            try await store.put(empty, under: "")
            await store.close()

            let reopened = try await fixture.openStore()
            #expect(reopened.entriesAtOpen == 2)
            #expect(try await reopened.entry(forKey: "users/1") == entry)
            #expect(try await reopened.entry(forKey: "") == empty)
            #expect(try await reopened.entry(forKey: "users/2") == nil)
            await reopened.close()
        }
    }

    @Test func theFileIsInWALModeWithFullSync() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            try await store.put(CacheEntry(status: 200, storedAtMs: 0), under: "a")
            #expect(FileManager.default.fileExists(atPath: fixture.path + "-wal"))
            await store.close()
        }
    }

    /// Writes queued while a batch runs share one transaction, and each writer resumes only
    /// once it committed.
    @Test(.timeLimit(.minutes(1)))
    func concurrentWritesShareOneCommitAndAreAllOnDisk() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let latch = Latch()
            let holding = Task { await store.hold { latch.block() } }
            try await waitUntil { latch.hasEntered }
            let count = 500
            let writes = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<count {
                        group.addTask {
                            let entry = CacheEntry(status: 200, body: Data("body \(index)".utf8), storedAtMs: Int64(index))
                            try await store.put(entry, under: "k/\(index)")
                        }
                    }
                    try await group.waitForAll()
                }
            }
            try await waitUntil { store.waitingCount == count }
            #expect(store.commits == 0)
            latch.open()
            await holding.value
            try await writes.value
            #expect(store.commits == 1)
            await store.close()

            let reopened = try await fixture.openStore()
            #expect(reopened.entriesAtOpen == count)
            #expect(try await reopened.entry(forKey: "k/321")?.body == Data("body 321".utf8))
            await reopened.close()
        }
    }

    /// A stalled disk holds a bounded number of operations: past `maxWaiting`, writes and
    /// lookups are refused at once (a provider then misses, or drops the write-back), and
    /// those queued still complete.
    @Test(.timeLimit(.minutes(1)))
    func aFullQueueRefusesAtOnce() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore(maxWaiting: 3)
            let latch = Latch()
            let holding = Task { await store.hold { latch.block() } }
            try await waitUntil { latch.hasEntered }
            let queued = (0..<3).map { index in
                Task { try await store.put(CacheEntry(status: 200, storedAtMs: 1), under: "k/\(index)") }
            }
            try await waitUntil { store.waitingCount == 3 }
            // Past the limit: answered while the disk still stalls (or, queued, only after it).
            let answered = Flag()
            let refusals = Task { () -> [SQLiteStoreError.Kind?] in
                defer { answered.raise() }
                var kinds: [SQLiteStoreError.Kind?] = []
                do throws(SQLiteStoreError) {
                    try await store.put(CacheEntry(status: 200, storedAtMs: 1), under: "refused")
                    kinds.append(nil)
                } catch {
                    kinds.append(error.kind)
                }
                do throws(SQLiteStoreError) {
                    _ = try await store.entry(forKey: "k/0")
                    kinds.append(nil)
                } catch {
                    kinds.append(error.kind)
                }
                return kinds
            }
            try await waitUntil { answered.isRaised }
            let provider = CacheProvider(memoryBytes: 0, store: store)
            let lookup = answered.isRaised ? await provider.perform(cacheRequest("k/1")) : nil
            #expect(lookup?.isMiss == true, "a provider misses")
            #expect(store.waitingCount == 3)
            latch.open()
            await holding.value
            #expect(await refusals.value == [.busy, .busy])
            for write in queued { try await write.value }
            #expect(try await store.count() == 3)
            #expect(try await store.entry(forKey: "refused") == nil)
            await store.close()
        }
    }

    /// Within one batch, a read queued before the first write sees the file as it was, and a
    /// read queued after it sees the writes; the writes still share one commit.
    @Test(.timeLimit(.minutes(1)))
    func aBatchAnswersReadsInQueueOrderAroundItsWrites() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let old = CacheEntry(status: 200, body: Data("old".utf8), storedAtMs: 1)
            try await store.put(old, under: "k")
            let commitsBefore = store.commits
            let latch = Latch()
            let holding = Task { await store.hold { latch.block() } }
            try await waitUntil { latch.hasEntered }
            let before = Task { try await store.entry(forKey: "k") }
            try await waitUntil { store.waitingCount == 1 }
            let removal = Task { try await store.remove(.key("k")) }
            try await waitUntil { store.waitingCount == 2 }
            let after = Task { try await store.entry(forKey: "k") }
            try await waitUntil { store.waitingCount == 3 }
            let put = Task { try await store.put(CacheEntry(status: 200, storedAtMs: 2), under: "other") }
            try await waitUntil { store.waitingCount == 4 }
            let count = Task { try await store.count() }
            try await waitUntil { store.waitingCount == 5 }
            latch.open()
            await holding.value
            #expect(try await before.value == old)
            #expect(try await removal.value == ["k"])
            #expect(try await after.value == nil)
            try await put.value
            #expect(try await count.value == 1)
            #expect(store.commits == commitsBefore + 1)
            await store.close()
        }
    }

    /// Files that are not databases, by name (the name keeps the test's output short).
    static let garbageFiles: [String: [UInt8]] = [
        "text": Array(String(repeating: "this is not a database ", count: 400).utf8),
        "tiny": Array("oops".utf8),
        "0xFF pages": [UInt8](repeating: 0xFF, count: 8192),
    ]

    @Test(arguments: ["text", "tiny", "0xFF pages"])
    func aFileThatIsNoDatabaseIsMovedAsideAndAFreshOneStarted(kind: String) async throws {
        let garbage = try #require(Self.garbageFiles[kind])
        try await withCacheFixture { fixture in
            try Data(garbage).write(to: URL(fileURLWithPath: fixture.path))
            let store = try await fixture.openStore()
            #expect(store.entriesAtOpen == 0)
            try await store.put(CacheEntry(status: 200, storedAtMs: 1), under: "after")
            #expect(try await store.entry(forKey: "after") != nil)
            await store.close()

            let aside = try fixture.files().filter { $0.hasPrefix("cache.db.corrupt-") }
            #expect(aside == ["cache.db.corrupt-\(aside.first?.dropFirst(17) ?? "")"])
            #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.folder + "/" + aside[0])) == Data(garbage))
            let errors = fixture.logs.messages(at: .error)
            #expect(errors.count == 1)
            #expect(errors.first?.contains(fixture.path) == true)
            #expect(errors.first?.contains("moved it aside to \(fixture.folder)/\(aside[0])") == true)
        }
    }

    /// A valid database of something else (most likely a mistyped `--store`) is refused and
    /// left exactly as it was: not converted to WAL, not moved aside, nothing added.
    @Test(arguments: [
        "CREATE TABLE other (a, b)",
        "CREATE TABLE entries (key TEXT PRIMARY KEY, value BLOB)",
        // This store's table, but not its application id.
        "CREATE TABLE entries (key TEXT PRIMARY KEY NOT NULL, status INTEGER NOT NULL, stored_at_ms INTEGER NOT NULL, ttl_ms INTEGER, headers TEXT NOT NULL, body BLOB NOT NULL)",
        "PRAGMA application_id = 7; CREATE TABLE t (a)",
        "PRAGMA application_id = 7",
        "PRAGMA journal_mode = WAL; CREATE TABLE notes (text); INSERT INTO notes VALUES ('keep me')",
    ])
    func anotherApplicationsDatabaseIsRefusedAndLeftUntouched(sql: String) async throws {
        try await withCacheFixture { fixture in
            try Self.createDatabase(at: fixture.path, sql: sql)
            let before = try fixture.files().map { try Data(contentsOf: URL(fileURLWithPath: fixture.folder + "/" + $0)) }
            let filesBefore = try fixture.files()
            do {
                let store = try await fixture.openStore()
                Issue.record("opened another application's database")
                await store.close()
            } catch let error as SQLiteStoreError {
                #expect(error.kind == .foreignDatabase)
                #expect(!error.isUnusableFile)
                #expect(error.message.contains(fixture.path))
                #expect(error.message.contains("belongs to something else"), "\(error.message)")
            }
            #expect(try fixture.files() == filesBefore)
            let after = try fixture.files().map { try Data(contentsOf: URL(fileURLWithPath: fixture.folder + "/" + $0)) }
            #expect(after == before, "the file was changed")
            #expect(fixture.logs.messages(at: .error).isEmpty)
        }
    }

    /// A file with this store's application id whose table has another shape (an older or
    /// broken version) is this store's to replace: it is moved aside.
    @Test(arguments: [
        "PRAGMA application_id = \(SQLiteDatabase.applicationID); CREATE TABLE entries (key TEXT PRIMARY KEY, value BLOB)",
        "PRAGMA application_id = \(SQLiteDatabase.applicationID); CREATE TABLE other (a)",
    ])
    func aCacheFileOfAnotherShapeIsMovedAside(sql: String) async throws {
        try await withCacheFixture { fixture in
            try Self.createDatabase(at: fixture.path, sql: sql)
            let store = try await fixture.openStore()
            #expect(store.entriesAtOpen == 0)
            try await store.put(CacheEntry(status: 200, storedAtMs: 1), under: "k")
            await store.close()
            #expect(try fixture.files().contains { $0.hasPrefix("cache.db.corrupt-") })
            #expect(fixture.logs.messages(at: .error).first?.contains("unusable") == true)
        }
    }

    /// An empty database (a valid header, no tables) becomes this store's file.
    @Test func anEmptyDatabaseIsInitialised() async throws {
        try await withCacheFixture { fixture in
            try Self.createDatabase(at: fixture.path, sql: "CREATE TABLE t (a); DROP TABLE t")
            let store = try await fixture.openStore()
            try await store.put(CacheEntry(status: 200, storedAtMs: 1), under: "k")
            #expect(try await store.count() == 1)
            await store.close()
            #expect(try fixture.files().allSatisfy { !$0.contains("corrupt") })
            #expect(fixture.logs.messages(at: .error).isEmpty)
        }
    }

    /// Damage below the schema is not seen when opening (no full check) but by the read that
    /// meets it: the file is moved aside then, the read finds nothing, and writes go on.
    @Test func corruptionFoundByAQueryMovesTheFileAside() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let big = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0) })
            try await store.put(CacheEntry(status: 200, body: big, storedAtMs: 1), under: "big")
            await store.close()
            // Overwrite the body's overflow pages (everything after the first few pages).
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: fixture.path))
            let size = try handle.seekToEnd()
            try handle.seek(toOffset: 6 * 4096)
            try handle.write(contentsOf: Data(repeating: 0xFF, count: Int(size) - 6 * 4096))
            try handle.close()

            let reopened = try await fixture.openStore()
            #expect(reopened.entriesAtOpen == 1)
            #expect(try fixture.files().allSatisfy { !$0.contains("corrupt") })
            #expect(try await reopened.entry(forKey: "big") == nil)
            #expect(try fixture.files().contains { $0.hasPrefix("cache.db.corrupt-") })
            #expect(fixture.logs.messages(at: .error).count == 1)
            try await reopened.put(CacheEntry(status: 200, storedAtMs: 2), under: "fresh")
            #expect(try await reopened.count() == 1)
            await reopened.close()
        }
    }

    /// One row whose headers do not decode is one bad entry, not a bad file: it is deleted
    /// and is a miss, and every other entry stays.
    @Test func anEntryWithUnreadableHeadersIsDroppedAloneNotTheFile() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let good = CacheEntry(status: 200, body: Data("good".utf8), storedAtMs: 1)
            try await store.put(good, under: "good")
            try await store.put(CacheEntry(status: 200, storedAtMs: 1), under: "bad")
            await store.close()
            try Self.createDatabase(at: fixture.path, sql: "UPDATE entries SET headers = '[1, 2' WHERE key = 'bad'")

            let reopened = try await fixture.openStore()
            #expect(reopened.entriesAtOpen == 2)
            #expect(try await reopened.entry(forKey: "bad") == nil)
            #expect(try await reopened.entry(forKey: "good") == good)
            #expect(try await reopened.count() == 1)
            #expect(try fixture.files().allSatisfy { !$0.contains("corrupt") })
            #expect(fixture.logs.messages(at: .error).isEmpty)
            let warnings = fixture.logs.messages(at: .warning)
            #expect(warnings.count == 1)
            #expect(warnings.first?.contains("bad") == true)
            await reopened.close()
        }
    }

    @Test func aFolderThatDoesNotExistIsAnErrorNotAMoveAside() async throws {
        try await withCacheFixture { fixture in
            await #expect(throws: SQLiteStoreError.self) {
                _ = try await fixture.openStore(at: fixture.folder + "/missing/cache.db")
            }
            #expect(fixture.logs.messages(at: .error).isEmpty)
        }
    }

    @Test func prefixDeletionIsExact() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let keys = ["user%/1", "user%", "userX/1", "user_/1", "users/1", "a\u{7F}x", "a\u{80}", "ab"]
            for key in keys { try await store.put(CacheEntry(status: 200, storedAtMs: 0), under: key) }
            #expect(try await store.remove(.prefix("user%")).sorted() == ["user%", "user%/1"])
            #expect(try await store.remove(.prefix("user_")) == ["user_/1"])
            #expect(try await store.remove(.prefix("a\u{7F}")) == ["a\u{7F}x"])
            #expect(try await store.remove(.prefix("zz")) == [])
            #expect(try await store.remove(.key("users/1")) == ["users/1"])
            #expect(try await store.remove(.key("users/1")) == [])
            #expect(Set(try await store.remove(.prefix(""))) == ["a\u{80}", "ab", "userX/1"])
            #expect(try await store.count() == 0)
            await store.close()
        }
    }

    @Test func theSuccessorOfAPrefixBoundsExactlyTheKeysStartingWithIt() {
        #expect(SQLiteDatabase.successor(ofPrefix: Array("ab".utf8)) == Array("ac".utf8))
        #expect(SQLiteDatabase.successor(ofPrefix: [0x61, 0xFF]) == [0x62])
        #expect(SQLiteDatabase.successor(ofPrefix: []) == nil)
        #expect(SQLiteDatabase.successor(ofPrefix: [0xFF, 0xFF]) == nil)
    }

    @Test func deletesOnlyEntriesExpiredBeforeTheBound() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            try await store.put(CacheEntry(status: 200, storedAtMs: 1000, ttlMs: 100), under: "old")
            try await store.put(CacheEntry(status: 200, storedAtMs: 1000, ttlMs: 5000), under: "young")
            try await store.put(CacheEntry(status: 200, storedAtMs: 0), under: "forever")
            #expect(try await store.deleteExpired(by: 1099) == 0)
            #expect(try await store.deleteExpired(by: 1100) == 1)
            #expect(try await store.entry(forKey: "old") == nil)
            #expect(try await store.count() == 2)
            await store.close()
        }
    }

    @Test func operationsAfterCloseFail() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            await store.close()
            await #expect(throws: SQLiteStoreError.self) {
                try await store.put(CacheEntry(status: 200, storedAtMs: 0), under: "k")
            }
        }
    }

    static func createDatabase(at path: String, sql: String) throws {
        var handle: OpaquePointer?
        guard sqlite3_open(path, &handle) == SQLITE_OK else { throw POSIXFailure(call: "sqlite3_open", code: EIO) }
        defer { sqlite3_close(handle) }
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw POSIXFailure(call: "sqlite3_exec", code: EIO) }
    }
}
