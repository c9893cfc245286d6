import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Monarch
import MonarchClient
import MonarchWire
import Testing

/// A client outlives its coordinator: it reconnects to the next one, sends the GET in flight
/// again, and tells a POST in flight that it may or may not have happened.
@Suite("Client reconnection", .serialized)
struct ClientReconnectTests {
    @Test("The coordinator restarted mid-run: a GET in flight is retried, a POST fails as outcomeUnknown")
    func restart() async throws {
        try await withClientOriginCluster { cluster, _ in
            let client = try await linkedClient(cluster)
            defer { Task { await client.close() } }
            #expect(try await client.perform(Request(path: "docs/hello.txt")).status == 200)

            // Slow enough to be still in flight however long a loaded machine takes to see both.
            let get = Task { await outcome(client, Request(path: "api/slow?ms=6000&name=get", policy: .noCache)) }
            let post = Task { await outcome(client, Request(path: "api/slow?ms=10000&name=post", method: "POST")) }
            try await eventually("both requests in flight") {
                try await cluster.status().typed.requestsInFlight == 2
            }
            try await killCoordinator(cluster)

            let posted = try await within(30, "the POST's end") { await post.value }
            guard case .transport(let transport)? = posted.failure else {
                Issue.record("expected a transport failure, got \(posted)")
                return
            }
            #expect(transport.kind == .outcomeUnknown, "\(transport)")
            #expect("\(transport)".contains("may or may not have happened"))

            try await withNextCoordinator(cluster) {
                let got = try await within(40, "the GET retried on the next coordinator") { await get.value }
                #expect(got.success?.status == 200, "\(got)")
                #expect(got.success.map { String(decoding: $0.body, as: UTF8.self) } == "finally")
                // The same client goes on.
                #expect(try await client.perform(Request(path: "docs/other.txt")).status == 200)
                await client.close()
            }
        }
    }

    @Test("The coordinator restarted: a client's watches are sent again by themselves, with an overflow for the gap, and changes keep coming")
    func watchesOutliveARestart() async throws {
        try await withClientOriginCluster { cluster, _ in
            let watcher = try await linkedClient(cluster)
            defer { Task { await watcher.close() } }
            let watch = try await watcher.watch(.path("api/counter", domain: "api"))
            // Every iterator of a watch takes from the same changes.
            let nextChange: @Sendable () async -> CacheChange? = {
                var changes = watch.makeAsyncIterator()
                return await changes.next()
            }

            try await killCoordinator(cluster)
            try await withNextCoordinator(cluster) {
                try await eventually("the watch restored on the next coordinator") {
                    try await cluster.status().counter("watches") == 1
                }
                let fetcher = try await cluster.connect()
                #expect(try await fetcher.perform(Request(path: "api/counter")).status == 200)
                await fetcher.close()
                let gap = try await within(20, "the gap") { await nextChange() }
                #expect(gap?.kind == .overflow && gap?.dropped == nil, "\(String(describing: gap))")
                let stored = try await within(20, "the change after the restart") { await nextChange() }
                #expect(stored == CacheChange(kind: .stored, key: "GET api api/counter"), "\(String(describing: stored))")
                await watcher.close()
            }
        }
    }

    @Test("A watch cancelled while the coordinator is away stops only itself: the others, restored, keep getting changes")
    func cancellingAWatchWhileAwayStopsOnlyIt() async throws {
        try await withClientOriginCluster { cluster, _ in
            let watcher = try await linkedClient(cluster)
            defer { Task { await watcher.close() } }
            // Three watches of one key, under ids 1, 2 and 3 of this connection.
            var watches: [CacheWatch] = []
            for _ in 0..<3 { watches.append(try await watcher.watch(.path("api/counter", domain: "api"))) }

            try await killCoordinator(cluster)
            // Cancelled while away: on the next connection the others get ids from 1 again.
            let cancelled = watches[0]
            let cancelling = Task { await cancelled.cancel() }
            try await withNextCoordinator(cluster) {
                try await eventually("the two other watches restored on the next coordinator") {
                    try await cluster.status().counter("watches") == 2
                }
                await cancelling.value
                let fetcher = try await cluster.connect()
                #expect(try await fetcher.perform(Request(path: "api/counter")).status == 200)
                await fetcher.close()
                for (index, watch) in watches.dropFirst().enumerated() {
                    // Every iterator of a watch takes from the same changes.
                    let nextChange: @Sendable () async -> CacheChange? = {
                        var changes = watch.makeAsyncIterator()
                        return await changes.next()
                    }
                    let gap = try await within(20, "watch \(index + 2)'s gap") { await nextChange() }
                    #expect(gap?.kind == .overflow, "\(String(describing: gap))")
                    let stored = try await within(20, "watch \(index + 2)'s change") { await nextChange() }
                    #expect(stored?.kind == .stored, "\(String(describing: stored))")
                }
                #expect(try await cluster.status().counter("watches") == 2, "no unwatch reached another watch")
                await watcher.close()
            }
        }
    }
}

extension ClientReconnectTests {
    /// A client of `cluster` that dials a link to the coordinator's socket, so that the test
    /// decides when the next coordinator becomes reachable (see ``killCoordinator(_:)`` and
    /// ``withNextCoordinator(_:_:)``).
    func linkedClient(_ cluster: TestCluster) async throws -> MonarchClient {
        let link = cluster.folder.path + "/link.sock"
        #expect(symlink(cluster.folder.path + "/c.sock", link) == 0)
        return try await within(20, "connecting") {
            try await MonarchClient.connect(to: .unix(path: link), options: MonarchClient.Options(maxReconnectDelay: .milliseconds(200)))
        }
    }

    /// Kills `cluster`'s coordinator and removes the link its clients dial.
    func killCoordinator(_ cluster: TestCluster) async throws {
        cluster.up.signal(SIGKILL)
        _ = try await cluster.up.waitForExit(timeout: 15)
        unlink(cluster.folder.path + "/link.sock")
    }

    /// Starts the next coordinator on `cluster`'s sockets, makes the link again once it is
    /// ready, runs `body`, then stops it (with its workers) before the folder goes, whatever
    /// happens, and checks that it exited cleanly.
    func withNextCoordinator(_ cluster: TestCluster, _ body: () async throws -> Void) async throws {
        let next = try Spawned(Executables.monarch, ["up", "--config", cluster.configPath])
        do {
            _ = try await next.waitForOutput(containing: "ready")
            #expect(symlink(cluster.folder.path + "/c.sock", cluster.folder.path + "/link.sock") == 0)
            try await body()
        } catch {
            next.signal(SIGKILL)
            throw error
        }
        next.signal(SIGTERM)
        #expect(try await next.waitForExit(timeout: 60) == 0, "stderr:\n\(next.stderr.text)")
    }
}
