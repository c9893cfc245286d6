#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@testable import MonarchCoordinator
import MonarchWire
import Synchronization
import Testing

/// Reads that arrive after a trip's answer and before its write-back is stored get that
/// answer (``HeldAnswers``) — when the cache would keep it for everyone, and unless an
/// invalidation came in between.
@Suite("Held answers")
struct HeldAnswerTests {
    /// Answers every lookup the cache is asked with a miss, until cancelled.
    func missEverything(_ cache: ScriptedWorker) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled, let request = try? await cache.nextRequest() { try? await cache.miss(request.id) }
        }
    }

    @Test("50 identical requests pipelined on one connection reach the origin once, while the write-back is not stored yet")
    func pipelinedReadsShareTheAnswer() async throws {
        try await InProcessCluster.with(InProcessCluster.cachedDocs) { cluster in
            let cache = try await cluster.worker(kind: "cache", name: "cache-a")
            let bundle = try await cluster.worker(kind: "bundle", name: "bundle-a")
            let trips = Atomic<Int>(0)
            let misses = missEverything(cache)
            let origin = Task {
                while !Task.isCancelled, let request = try? await bundle.nextRequest() {
                    trips.add(1, ordering: .relaxed)
                    try? await bundle.respond(request.id, "the guide")
                }
            }
            defer {
                misses.cancel()
                origin.cancel()
            }
            let client = try await cluster.client()
            let count: MessageID = 50
            for id in 1...count { try await client.send(RequestMessage(id: id, path: "guide.txt")) }
            // The first trip's write-back reaches the cache, which does not acknowledge it yet.
            guard case .store(let store) = try await cache.nextOther() else {
                Issue.record("no write-back")
                return
            }
            for id in 1...count { #expect(text(try await client.answer(id)) == "the guide", "request \(id)") }
            #expect(trips.load(ordering: .relaxed) == 1, "identical reads reached the origin more than once")
            try await cache.connection.send(.result(ResultMessage(id: store.id)))
        }
    }

    @Test("An invalidation between a trip's answer and a later read wins: the read goes down the chain again")
    func invalidationWins() async throws {
        try await InProcessCluster.with(InProcessCluster.cachedDocs) { cluster in
            let cache = try await cluster.worker(kind: "cache", name: "cache-a")
            let bundle = try await cluster.worker(kind: "bundle", name: "bundle-a")
            let client = try await cluster.client()
            try await client.send(RequestMessage(id: 1, path: "guide.txt"))
            try await cache.miss(try await cache.nextRequest().id)
            try await bundle.respond(try await bundle.nextRequest().id, "old")
            #expect(text(try await client.answer(1)) == "old")
            guard case .store = try await cache.nextOther() else {
                Issue.record("no write-back")
                return
            }
            // Not acknowledged: the write-back is still under way when the invalidation comes.
            try await client.send(.invalidate(InvalidateMessage(id: 2, target: .path("guide.txt"))))
            // The path's keys (GET and HEAD), one after the other.
            for _ in 0..<2 {
                guard case .invalidate(let invalidation) = try await cache.nextOther() else {
                    Issue.record("the cache was not told of the invalidation")
                    return
                }
                try await cache.connection.send(.result(ResultMessage(id: invalidation.id, data: ["removed": .integer(0)])))
            }
            guard case .result = try await client.answer(2) else {
                Issue.record("the invalidation failed")
                return
            }
            try await client.send(RequestMessage(id: 3, path: "guide.txt"))
            try await cache.miss(try await cache.nextRequest().id)
            try await bundle.respond(try await bundle.nextRequest().id, "new")
            #expect(text(try await client.answer(3)) == "new")
        }
    }

    @Test("A private answer is never handed to a later read")
    func privateAnswersAreNotHeld() async throws {
        try await InProcessCluster.with(InProcessCluster.cachedDocs) { cluster in
            let cache = try await cluster.worker(kind: "cache", name: "cache-a")
            let bundle = try await cluster.worker(kind: "bundle", name: "bundle-a")
            let client = try await cluster.client()
            try await client.send(RequestMessage(id: 1, path: "me.txt"))
            try await cache.miss(try await cache.nextRequest().id)
            try await bundle.respond(try await bundle.nextRequest().id, "mine", headers: ["Cache-Control": "private"])
            #expect(text(try await client.answer(1)) == "mine")
            try await client.send(RequestMessage(id: 2, path: "me.txt"))
            try await cache.miss(try await cache.nextRequest().id)
            try await bundle.respond(try await bundle.nextRequest().id, "yours", headers: ["Cache-Control": "private"])
            #expect(text(try await client.answer(2)) == "yours")
        }
    }
}
