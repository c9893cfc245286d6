import Foundation
@testable import MonarchCache
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The cache's folder and files are its user's alone, whatever the umask: with a permissive
/// umask (0), SQLite and `mkdir` alone would make them readable (and writable) by everyone.
@Suite(.serialized) struct PrivateFilesTests {
    /// The permission bits of `path`, or nil when it does not exist.
    private func mode(_ path: String) -> mode_t? {
        var status = stat()
        return lstat(path, &status) == 0 ? status.st_mode & 0o7777 : nil
    }

    /// Runs `body` with the process's umask set to `mask`, then restores it.
    private func withUmask<T>(_ mask: mode_t, _ body: () async throws -> T) async rethrows -> T {
        let previous = umask(mask)
        defer { umask(previous) }
        return try await body()
    }

    @Test func createdFoldersAre0700AndTheFilesOfANewStore0600() async throws {
        try await withCacheFixture { fixture in
            try await withUmask(0) {
                let path = fixture.folder + "/made/by/worker/cache.db"
                try SQLiteStore.createFolder(containing: path)
                for folder in ["/made", "/made/by", "/made/by/worker"] {
                    #expect(mode(fixture.folder + folder) == 0o700, "\(folder)")
                }
                let store = try await fixture.openStore(at: path)
                try await store.put(CacheEntry(status: 200, body: Data("private".utf8), storedAtMs: 1), under: "k")
                // The store is open and has written: its WAL and shared memory are there.
                for file in [path, path + "-wal", path + "-shm"] {
                    #expect(mode(file) == 0o600, "\(file): \(String(mode(file) ?? 0, radix: 8))")
                }
                await store.close()
                #expect(mode(path) == 0o600)
            }
        }
    }

    /// A folder the operator made keeps the mode they gave it; the files in it are still
    /// the worker's alone.
    @Test func anExistingFolderIsLeftAsItWas() async throws {
        try await withCacheFixture { fixture in
            try await withUmask(0) {
                let folder = fixture.folder + "/shared"
                #expect(mkdir(folder, 0o755) == 0)
                #expect(chmod(folder, 0o755) == 0)
                try SQLiteStore.createFolder(containing: folder + "/cache.db")
                #expect(mode(folder) == 0o755)
                let store = try await fixture.openStore(at: folder + "/cache.db")
                #expect(mode(folder) == 0o755)
                #expect(mode(folder + "/cache.db") == 0o600)
                await store.close()
            }
        }
    }

    /// A store's files left readable by others (an older version, a hand-made copy) lose the
    /// group and other permissions when the store opens them.
    @Test func anExistingStoresFilesAreRestrictedWhenOpened() async throws {
        try await withCacheFixture { fixture in
            try await withUmask(0) {
                let store = try await fixture.openStore()
                try await store.put(CacheEntry(status: 200, body: Data("private".utf8), storedAtMs: 1), under: "k")
                await store.close()
                #expect(chmod(fixture.path, 0o666) == 0)
                // A WAL left behind by a crash, readable by everyone.
                #expect(FileManager.default.createFile(atPath: fixture.path + "-wal", contents: Data()))
                #expect(chmod(fixture.path + "-wal", 0o644) == 0)

                let reopened = try await fixture.openStore()
                #expect(mode(fixture.path) == 0o600)
                #expect(mode(fixture.path + "-wal") == 0o600)
                #expect(mode(fixture.path + "-shm") == 0o600)
                #expect(try await reopened.entry(forKey: "k")?.body == Data("private".utf8))
                await reopened.close()
                #expect(fixture.logs.messages(at: .warning).isEmpty)
            }
        }
    }

    /// The fresh file that replaces an unusable one is private too.
    @Test func theFreshFileReplacingAnUnusableOneIs0600() async throws {
        try await withCacheFixture { fixture in
            try await withUmask(0) {
                #expect(FileManager.default.createFile(atPath: fixture.path, contents: Data("not a database".utf8)))
                #expect(chmod(fixture.path, 0o644) == 0)
                let store = try await fixture.openStore()
                try await store.put(CacheEntry(status: 200, storedAtMs: 1), under: "k")
                #expect(try fixture.files().contains { $0.hasPrefix("cache.db.corrupt-") })
                #expect(mode(fixture.path) == 0o600)
                #expect(mode(fixture.path + "-wal") == 0o600)
                await store.close()
            }
        }
    }
}
