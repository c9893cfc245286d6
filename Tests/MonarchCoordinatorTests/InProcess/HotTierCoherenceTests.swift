#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@testable import MonarchCoordinator
import MonarchRouter
import MonarchWire
import Testing

/// The hot tier in a running coordinator: a hit it holds is answered without a trip to the
/// cache worker, and every change — invalidation, write-back, another coordinator's change —
/// drops it before it is acknowledged or applied, also when reads race the change.
@Suite("Hot tier coherence")
struct HotTierCoherenceTests {
    static let path = "guide.txt"
    static let key = CacheKey(method: "GET", domain: "docs", encodedPath: path, query: []).rawValue

    /// Answers `request` as a cache worker's hit: `body`, tagged `t1`, `ageMs` old, fresh for 60 s.
    static func hit(_ cache: ScriptedWorker, _ request: RequestMessage, _ body: String, ageMs: UInt64 = 5) async throws {
        try await cache.connection.send(.response(ResponseMessage(
            id: request.id, status: 200, source: "cache", headers: ["surrogate-key": "t1"], body: Data(body.utf8),
            ageMs: ageMs, ttlMs: 60_000)))
    }

    /// Reads the path as request `id`, which the cache worker answers with a hit holding `body`:
    /// the hot tier then holds it.
    static func fill(_ cluster: InProcessCluster, _ client: TestClient, _ cache: ScriptedWorker, _ body: String, id: MessageID = 1)
        async throws
    {
        try await client.send(RequestMessage(id: id, path: path))
        try await hit(cache, try await cache.nextRequest(), body)
        #expect(text(try await client.answer(id)) == body)
        try await eventually("the hot tier to hold it") { try await hotEntries(cluster) == 1 }
    }

    /// Runs `body` on a cluster with a cache and a bundle worker and a client watching the key,
    /// once the hot tier holds "old" under it; the hot tier reads the time on `clock`'s wall
    /// clock when one is given.
    static func withOldHotEntry(
        clock: TestClock? = nil,
        _ body: @Sendable (InProcessCluster, TestClient, _ cache: ScriptedWorker, _ bundle: ScriptedWorker) async throws -> Void
    ) async throws {
        try await InProcessCluster.with(InProcessCluster.cachedDocs, wallClock: clock?.wallClock ?? .system) { cluster in
            let cache = try await cluster.worker(kind: "cache", name: "cache-a")
            let bundle = try await cluster.worker(kind: "bundle", name: "bundle-a")
            let client = try await cluster.client()
            try await client.send(.watch(WatchMessage(id: 50, target: .key(key))))
            _ = try await client.answer(50)
            try await fill(cluster, client, cache, "old")
            try await body(cluster, client, cache, bundle)
        }
    }

    static func hotEntries(_ cluster: InProcessCluster) async throws -> Int {
        await CoordinatorActor.run { cluster.coordinator.hotTier?.tier.count ?? 0 }
    }

    /// Reads the path as request `id` and expects the cache worker to be asked (a hot tier miss):
    /// it answers with a miss, the bundle with `body`.
    static func readThroughTheChain(_ client: TestClient, _ cache: ScriptedWorker, _ bundle: ScriptedWorker, id: MessageID,
                                    expecting body: String) async throws {
        try await client.send(RequestMessage(id: id, path: path))
        try await cache.miss(try await cache.nextRequest().id)
        try await bundle.respond(try await bundle.nextRequest().id, body)
        #expect(text(try await client.answer(id)) == body)
    }

    @Test("A held hit is answered without asking the cache worker, as the worker answers it, with its age now")
    func hotHitSkipsTheCacheWorker() async throws {
        let clock = TestClock()
        try await Self.withOldHotEntry(clock: clock) { cluster, client, cache, _ in
            clock.advance(by: .milliseconds(20))
            try await client.send(RequestMessage(id: 2, path: Self.path))
            guard case .response(let response) = try await client.answer(2) else {
                Issue.record("no response")
                return
            }
            #expect(response.body.map { String(decoding: $0, as: UTF8.self) } == "old")
            #expect(response.source == "cache" && response.ttlMs == 60_000 && response.stale == nil)
            #expect(response.ageMs == 25, "its age counts on from the worker's 5 ms")
            #expect(response.headers?["surrogate-key"] == "t1")
            #expect(!cache.pending.contains { if case .request = $0 { true } else { false } })
            let report = await CoordinatorActor.run { cluster.coordinator.statusReport() }
            #expect(report.domains.first { $0.name == "docs" }?.hotHits == 1)
            #expect(report.domains.first { $0.name == "docs" }?.hits == 2)
            #expect(report.hotTier?.hits == 1 && report.hotTier?.entries == 1)
            #expect(report.answersBySource["cache"] == 2)
        }
    }

    @Test("limits.hotTier: 0 turns it off: every hit is the cache worker's")
    func zeroBudgetTurnsItOff() async throws {
        try await InProcessCluster.with(InProcessCluster.cachedDocs + "\nlimits: { hotTier: 0 }") { cluster in
            let cache = try await cluster.worker(kind: "cache", name: "cache-a")
            let client = try await cluster.client()
            for id: MessageID in 1...2 {
                try await client.send(RequestMessage(id: id, path: Self.path))
                try await Self.hit(cache, try await cache.nextRequest(), "cached")
                #expect(text(try await client.answer(id)) == "cached")
            }
            #expect(await CoordinatorActor.run { cluster.coordinator.statusReport().hotTier } == nil)
        }
    }

    @Test(
        "An invalidation drops the hot entry before it is acknowledged, and watchers hear of it",
        arguments: [
            CacheTarget.path(path), .key(key), .prefix("GET docs guide"), .tag("t1"),
        ])
    func invalidationDrops(_ target: CacheTarget) async throws {
        try await Self.withOldHotEntry { cluster, client, cache, bundle in
            try await client.send(.invalidate(InvalidateMessage(id: 2, target: target)))
            // A path's two keys (GET, HEAD) one after the other; a key, prefix or tag at once.
            let invalidations = if case .path = target { 2 } else { 1 }
            for _ in 0..<invalidations {
                guard case .invalidate(let invalidation) = try await cache.nextOther() else {
                    Issue.record("the cache worker was not told")
                    return
                }
                try await cache.connection.send(.result(ResultMessage(id: invalidation.id, data: [
                    "removed": .integer(1), "keys": .array([.string(Self.key)]),
                ])))
            }
            guard case .result = try await client.answer(2) else {
                Issue.record("the invalidation failed")
                return
            }
            try await Self.readThroughTheChain(client, cache, bundle, id: 3, expecting: "new")
            let event = try await client.changed(watch: 50)
            #expect(event.event == .invalidated)
        }
    }

    @Test("A write-back drops the hot entry: the next read gets what was written back, from the cache worker")
    func writeBackDrops() async throws {
        try await Self.withOldHotEntry { cluster, client, cache, bundle in
            // networkFirst asks the bundle first, and writes its answer back to the cache.
            try await client.send(RequestMessage(id: 2, path: Self.path, policy: .networkFirst))
            try await bundle.respond(try await bundle.nextRequest().id, "new")
            #expect(text(try await client.answer(2)) == "new")
            guard case .store(let store) = try await cache.nextOther() else {
                Issue.record("no write-back")
                return
            }
            #expect(try await Self.hotEntries(cluster) == 0, "dropped as the write-back began")
            try await cache.connection.send(.result(ResultMessage(id: store.id)))
            try await client.send(RequestMessage(id: 3, path: Self.path))
            try await Self.hit(cache, try await cache.nextRequest(), "new")
            #expect(text(try await client.answer(3)) == "new")
        }
    }

    @Test(
        "Another coordinator's change, forwarded by a cache worker, drops the hot entry",
        arguments: [SharedChangeMessage.Event.stored, .invalidated])
    func sharedChangeDrops(_ event: SharedChangeMessage.Event) async throws {
        try await Self.withOldHotEntry { cluster, client, cache, bundle in
            try await cache.connection.send(.sharedChange(SharedChangeMessage(change: "other.1", event: event, target: .key(Self.key))))
            // Watchers hear of it once it is applied.
            let heard = try await client.changed(watch: 50)
            #expect(heard.event == (event == .stored ? .stored : .invalidated))
            #expect(try await Self.hotEntries(cluster) == 0)
            try await Self.readThroughTheChain(client, cache, bundle, id: 3, expecting: "new")
        }
    }

    @Test("After an invalidation is acknowledged, no read returns the old body, even one whose read raced it")
    func burstOfReadsRacingAnInvalidation() async throws {
        try await Self.withOldHotEntry { cluster, client, cache, _ in
            try await client.send(.invalidate(InvalidateMessage(id: 100, target: .key(Self.key))))
            guard case .invalidate(let invalidation) = try await cache.nextOther() else {
                Issue.record("the cache worker was not told")
                return
            }
            // A burst while the invalidation is under way: the hot tier no longer answers, and
            // their read reaches the cache worker before it has dropped the entry.
            for id: MessageID in 101...164 { try await client.send(RequestMessage(id: id, path: Self.path)) }
            let raced = try await cache.nextRequest()
            try await cache.connection.send(.result(ResultMessage(id: invalidation.id, data: ["removed": .integer(1)])))
            guard case .result = try await client.answer(100) else {
                Issue.record("the invalidation failed")
                return
            }
            // The raced read comes back with the old entry after the acknowledgement.
            try await Self.hit(cache, raced, "old")
            for id: MessageID in 101...164 { _ = try await client.answer(id) }
            let answering = Task {
                while !Task.isCancelled, let request = try? await cache.nextRequest() { try? await Self.hit(cache, request, "new") }
            }
            defer { answering.cancel() }
            for round in 0..<4 {
                let first = MessageID(200 + round * 16)
                for id in first..<(first + 16) { try await client.send(RequestMessage(id: id, path: Self.path)) }
                for id in first..<(first + 16) {
                    #expect(text(try await client.answer(id)) == "new", "request \(id), after the acknowledgement")
                }
            }
            let refused = await CoordinatorActor.run { cluster.coordinator.hotTier?.tier.refusedAfterChange ?? 0 }
            #expect(refused == 1, "the raced read's answer was not kept")
        }
    }
}
