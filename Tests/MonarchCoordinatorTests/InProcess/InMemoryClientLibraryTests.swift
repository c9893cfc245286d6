#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
import MonarchClient
import MonarchLoop
@testable import MonarchCoordinator
import MonarchTransport
import MonarchWire
import Synchronization
import Testing

/// The client library over in-memory connections (``MonarchClient/connect(inProcess:options:_:)``):
/// a real ``MonarchClient`` — typed requests, invalidation, reconnection — against a coordinator
/// in the test process, each of its connections an end ``Coordinator/attachInMemoryClient(token:)``
/// returns, its workers scripted and in memory too: no socket anywhere, no message encoded.
@Suite("The client library in memory")
struct InMemoryClientLibraryTests {
    /// What a typed request's JSON body decodes to.
    struct Guide: Decodable, Sendable, Equatable {
        let title: String
        let pages: Int
    }

    /// A typed request for the guide.
    struct GuideRequest: MonarchRequest {
        typealias Response = Guide
        var path: String { "guide.json" }
        var previewData: Guide { Guide(title: "preview", pages: 0) }
    }

    /// A count that closures on any thread add to.
    final class Tally: Sendable {
        private let count = Atomic<Int>(0)
        /// Adds one.
        func add() { count.add(1, ordering: .relaxed) }
        /// The count so far.
        var value: Int { count.load(ordering: .relaxed) }
    }

    /// A client of `cluster`'s coordinator over in-memory ends; `dials` counts the ends made.
    static func client(of cluster: InProcessCluster, dials: Tally? = nil) async throws -> MonarchClient {
        let coordinator = cluster.coordinator
        return try await MonarchClient.connect(inProcess: "in-memory coordinator") {
            dials?.add()
            return try await CoordinatorActor.run { try coordinator.attachInMemoryClient() }
        }
    }

    /// The coordinator's client sessions' connections.
    @CoordinatorActor
    static func clientConnections(of coordinator: Coordinator) -> [any MessageConnection] {
        coordinator.clients.values.map(\.connection)
    }

    @Test("A typed request and a plain get from a MonarchClient in memory go down the chain of in-memory workers and come back decoded")
    func typedRequestAndGet() async throws {
        try await InProcessCluster.with(InProcessCluster.cachedDocs) { cluster in
            let cache = try await cluster.worker(kind: "cache", name: "cache-a", over: .inMemory)
            let bundle = try await cluster.worker(kind: "bundle", name: "bundle-a", over: .inMemory)
            let client = try await Self.client(of: cluster)
            let connections = await CoordinatorActor.run { Self.clientConnections(of: cluster.coordinator) }
            #expect(connections.count == 1 && connections.first is InMemoryConnection, "the session is over the in-memory end")

            async let typed = client.perform(GuideRequest())
            let atCache = try await cache.nextRequest()
            #expect(atCache.path == "guide.json")
            try await cache.miss(atCache.id)
            try await bundle.respond(
                try await bundle.nextRequest().id, #"{"title":"The guide","pages":42}"#, headers: ["content-type": "application/json"])
            #expect(try await typed == Guide(title: "The guide", pages: 42))

            async let plain = client.perform(Request(path: "notes.txt"))
            let again = try await cache.nextRequest()
            #expect(again.path == "notes.txt" && again.key != nil)
            try await cache.respond(again.id, "from the cache", headers: ["x-from": "cache"])
            let response = try await plain
            #expect(response.status == 200 && response.body == Data("from the cache".utf8))
            #expect(response.headers["x-from"] == "cache")
            await client.close()
        }
    }

    @Test("A MonarchClient in memory invalidates a path: each of its keys is dropped at the cache worker, and the count comes back")
    func invalidation() async throws {
        try await InProcessCluster.with(InProcessCluster.cachedDocs) { cluster in
            let cache = try await cluster.worker(kind: "cache", name: "cache-a", over: .inMemory)
            let client = try await Self.client(of: cluster)
            async let invalidated = client.invalidate(path: "guide.txt")
            var targets: [InvalidateMessage.Target] = []
            // The path's keys (GET and HEAD), one after the other; each had one entry.
            for _ in 0..<2 {
                guard case .invalidate(let invalidation) = try await cache.nextOther() else {
                    Issue.record("the cache was not told of the invalidation")
                    return
                }
                targets.append(invalidation.target)
                try await cache.connection.send(.result(ResultMessage(id: invalidation.id, data: ["removed": .integer(1)])))
            }
            let report = try await invalidated
            #expect(report.removed == 2, "\(report)")
            #expect(targets.count == 2)
            await client.close()
        }
    }

    @Test("A MonarchClient in memory whose connection the coordinator closes makes a new one through its factory and is served on it")
    func reconnectsThroughTheFactory() async throws {
        try await InProcessCluster.with(InProcessCluster.cachedDocs) { cluster in
            let cache = try await cluster.worker(kind: "cache", name: "cache-a", over: .inMemory)
            let dials = Tally()
            let client = try await Self.client(of: cluster, dials: dials)
            #expect(dials.value == 1)
            await CoordinatorActor.run {
                for connection in Self.clientConnections(of: cluster.coordinator) { connection.close() }
            }
            try await eventually("the coordinator to forget the closed client") {
                await CoordinatorActor.run { cluster.coordinator.clients.isEmpty }
            }
            async let answer = client.perform(Request(path: "guide.txt"))
            let request = try await cache.nextRequest()
            try await cache.respond(request.id, "on the new connection")
            #expect(try await answer.body == Data("on the new connection".utf8))
            #expect(dials.value == 2, "one more in-memory end was made")
            #expect(await CoordinatorActor.run { cluster.coordinator.clients.count } == 1)
            await client.close()
        }
    }

    @Test("A connection whose first message is no welcome, or a factory that fails, is refused as cannotConnect")
    func noWelcomeNoClient() async throws {
        try await InProcessCluster.with(InProcessCluster.cachedDocs) { cluster in
            let loop = cluster.loop
            let impostors = Tally()
            let ends = LoopBound<[InMemoryConnection]>([], loop: loop)
            do {
                _ = try await MonarchClient.connect(inProcess: "impostor") {
                    try await loop.submit {
                        let (ours, theirs) = InMemoryConnection.pair(on: loop)
                        try ours.send(.pong(PongMessage()))
                        ends.value.append(ours)
                        impostors.add()
                        return theirs
                    }
                }
                Issue.record("a client was made over a connection that never welcomed it")
            } catch let error as MonarchError {
                guard case .transport(let transport) = error else { throw error }
                #expect(transport.kind == .cannotConnect)
                #expect("\(transport)".contains("impostor answered hello with pong"), "\(transport)")
            }
            do {
                _ = try await MonarchClient.connect(inProcess: "gone") { throw InProcessError("no coordinator here") }
                Issue.record("a client was made with no connection")
            } catch let error as MonarchError {
                guard case .transport(let transport) = error else { throw error }
                #expect(transport.kind == .cannotConnect && "\(transport)".contains("no coordinator here"), "\(transport)")
            }
            #expect(impostors.value == 1, "no second dial after a refusal")
            try await eventually("the impostor's end to see the client close its own") {
                try await loop.submit { ends.value.map(\.isOpen) == [false] }
            }
        }
    }
}
