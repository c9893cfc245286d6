import Foundation
import Monarch
import MonarchCache
import MonarchLoop
import MonarchTransport
import MonarchWire
import MonarchWorker
import TestOrigins
import Testing

/// The provider behind a real ``WorkerRuntime``, over a Unix socket: the coordinator's
/// `store`, `request` and `invalidate` messages reach the cache.
@Suite struct CacheWorkerTests {
    @Test(.timeLimit(.minutes(1)))
    func storeRequestAndInvalidateTravelTheWire() async throws {
        try await withCacheFixture { fixture in
            let store = try await fixture.openStore()
            let runtime = WorkerRuntime(
                identity: WorkerIdentity(kind: "cache"), provider: fixture.provider(store: store), loop: fixture.loop,
                logger: fixture.logs.logger)
            let coordinator = try await TestCoordinator.connect(runtime, fixture)
            let worker = coordinator.worker
            #expect(coordinator.hello.kind == "cache")

            try await worker.send(.store(StoreMessage(id: 1, key: "users/1", status: 200, body: Data("one".utf8), ttlMs: 60_000)))
            #expect(try await worker.nextMessage() == .result(ResultMessage(id: 1, data: ["stored": .bool(true)])))
            try await worker.send(.request(RequestMessage(id: 2, path: "users/1", key: "users/1")))
            guard case .response(let response)? = try await worker.nextMessage() else {
                Issue.record("expected a response")
                return
            }
            #expect(response.id == 2)
            #expect(response.source == "cache")
            #expect(response.body == Data("one".utf8))
            #expect(response.stale == nil)
            #expect(response.ttlMs == 60_000)
            try await worker.send(.invalidate(InvalidateMessage(id: 3, target: .prefix("users/"))))
            #expect(
                try await worker.nextMessage()
                    == .result(ResultMessage(id: 3, data: ["removed": .integer(1), "keys": .array([.string("users/1")])])))
            try await worker.send(.request(RequestMessage(id: 4, path: "users/1", key: "users/1")))
            guard case .miss(let miss)? = try await worker.nextMessage() else {
                Issue.record("expected a miss")
                return
            }
            #expect(miss.id == 4)

            try await coordinator.finish()
            await store.close()
        }
    }
    /// A `--store` the worker cannot use — TLS, a password in the address, an unknown scheme —
    /// is refused before it starts, saying why.
    @Test(.timeLimit(.minutes(1)))
    func theWorkerRefusesRedisAddressesItCannotUse() async throws {
        let executable = ProcessSetup.executableDirectory + "/monarch-cache-worker"
        try #require(FileManager.default.isExecutableFile(atPath: executable), "build the worker first: \(executable)")
        let cases = [
            ("rediss://cache:6379/0", "has no TLS"), ("redis://:secret@cache:6379/0", "MONARCH_REDIS_PASSWORD"),
            ("redis://cache:99999/0", "a port from 1 to 65535"), ("memcached://cache", "sqlite:PATH or redis://HOST:PORT/DB"),
        ]
        for (store, reason) in cases {
            let worker = try SpawnedProcess(
                executable: executable, arguments: ["--coordinator", "unix:/nonexistent/coordinator.sock", "--store", store],
                standardOutput: .collect, standardError: .standardOutput)
            let exit = try await worker.waitForExit(timeout: .seconds(30))
            try await waitUntil { worker.standardOutput.isClosed }
            #expect(exit != nil && exit != .exited(0))
            #expect(worker.standardOutput.text.contains(reason), "\(store): \(worker.standardOutput.text)")
        }
    }

    /// A `--store` naming another application's database: the worker says so, naming the
    /// file, exits non-zero at once, and leaves the file as it was.
    @Test(.timeLimit(.minutes(1)))
    func theWorkerRefusesAnotherApplicationsDatabaseAndExits() async throws {
        let executable = ProcessSetup.executableDirectory + "/monarch-cache-worker"
        try #require(FileManager.default.isExecutableFile(atPath: executable), "build the worker first: \(executable)")
        try await withCacheFixture { fixture in
            try SQLiteStoreTests.createDatabase(at: fixture.path, sql: "CREATE TABLE notes (text); INSERT INTO notes VALUES ('mine')")
            let before = try Data(contentsOf: URL(fileURLWithPath: fixture.path))
            let worker = try SpawnedProcess(
                executable: executable,
                arguments: ["--coordinator", "unix:\(fixture.folder)/coordinator.sock", "--store", "sqlite:\(fixture.path)"],
                standardOutput: .collect, standardError: .standardOutput
            )
            guard let exit = try await worker.waitForExit(timeout: .seconds(30)) else {
                worker.signal(SIGTERM)
                Issue.record("the worker did not exit")
                return
            }
            let printed = worker.standardOutput.text
            #expect(exit != .exited(0))
            #expect(printed.contains(fixture.path))
            #expect(printed.contains("belongs to something else"), "\(printed)")
            #expect(try fixture.files() == ["cache.db"])
            #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.path)) == before)
        }
    }
}
