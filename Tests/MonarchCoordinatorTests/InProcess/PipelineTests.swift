#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
@testable import MonarchCoordinator
import MonarchLoop
import MonarchWire
import Testing

/// The coordinator's pipeline in one process: client sessions, routing, flights, the chain of
/// pools, write-back and failover, with scripted workers on in-process connections, and clients
/// in memory unless a test needs their bytes on a socket.
@Suite("The coordinator in process")
struct PipelineTests {
    @Test(
        "A cache miss goes on to the bundle, whose answer reaches the client and is written back to the cache",
        arguments: [PeerTransport.inMemory, .socket])
    func chainAndWriteBack(_ transport: PeerTransport) async throws {
        try await InProcessCluster.with(InProcessCluster.cachedDocs) { cluster in
            let cache = try await cluster.worker(kind: "cache", name: "cache-a")
            let bundle = try await cluster.worker(kind: "bundle", name: "bundle-a")
            let client = try await cluster.client(over: transport)
            try await client.send(RequestMessage(id: 1, path: "guide.txt"))
            let atCache = try await cache.nextRequest()
            #expect(atCache.path == "guide.txt" && atCache.key != nil)
            try await cache.miss(atCache.id)
            let atBundle = try await bundle.nextRequest()
            try await bundle.respond(atBundle.id, "the guide")
            #expect(text(try await client.answer(1)) == "the guide")
            guard case .store(let store) = try await cache.nextOther() else {
                Issue.record("no write-back")
                return
            }
            #expect(store.key == atCache.key && store.body == Data("the guide".utf8) && store.ttlMs == 60_000)
            try await cache.connection.send(.result(ResultMessage(id: store.id)))
        }
    }

    @Test("Identical reads from three clients make one trip; each gets the answer, in its own payload form")
    func coalescing() async throws {
        try await InProcessCluster.with("domains: { docs: [bundle] }\nroutes: [{ match: \"...\", domain: docs }]") { cluster in
            let bundle = try await cluster.worker(kind: "bundle", name: "bundle-a")
            // In memory, raw bodies on a socket, JSON on a socket: one prepared response for all.
            let clients = [
                try await cluster.client(), try await cluster.client(features: [WireFeature.rawBodies]),
                try await cluster.client(over: .socket),
            ]
            for (index, client) in clients.enumerated() {
                for id in 1...3 { try await client.send(RequestMessage(id: MessageID(id + 10 * index), path: "hot")) }
            }
            let trip = try await bundle.nextRequest()
            try await eventually("every request to join the trip") {
                await cluster.coordinator.flights.joined == 8
            }
            try await bundle.respond(trip.id, "shared")
            for (index, client) in clients.enumerated() {
                for id in 1...3 { #expect(text(try await client.answer(MessageID(id + 10 * index))) == "shared") }
            }
            #expect(bundle.pending.isEmpty, "one trip only")
        }
    }

    @Test("A request waiting for its turn is answered when its deadline passes, not when its turn comes")
    func waitingRequestsExpire() async throws {
        // A queue no larger than a frame: one request of the client at a time.
        let yaml = "domains: { docs: [bundle] }\nroutes: [{ match: \"...\", domain: docs }]\nlimits: { maxFrame: 1MB, clientQueue: 1MB }"
        try await InProcessCluster.with(yaml) { cluster in
            let bundle = try await cluster.worker(kind: "bundle", name: "bundle-a")
            let client = try await cluster.client()
            try await client.send(RequestMessage(id: 1, path: "held", policy: .noCache))
            let held = try await bundle.nextRequest()
            try await client.send(RequestMessage(id: 2, path: "waits", policy: .noCache, deadlineMs: 200))
            #expect(code(try await client.answer(2)) == "deadlineExceeded", "answered while request 1 is still held")
            #expect(!bundle.pending.contains { if case .request = $0 { true } else { false } }, "request 2 never reached the worker")
            #expect(await CoordinatorActor.run { cluster.coordinator.requestsInFlight } == 1, "its share was given back")
            try await bundle.respond(held.id, "held")
            #expect(text(try await client.answer(1)) == "held")
        }
    }

    @Test("Answers past a client's queue become overloaded failures: it keeps its connection and gets one answer per request")
    func answersPastTheQueueAreRefused() async throws {
        let yaml = "domains: { docs: [bundle] }\nroutes: [{ match: \"...\", domain: docs }]\nlimits: { maxFrame: 1MB, clientQueue: 1MB }"
        try await InProcessCluster.with(yaml) { cluster in
            let bundle = try await cluster.worker(kind: "bundle", name: "bundle-a")
            let client = try await cluster.client(reading: false)
            // A small first answer sizes the window for small answers: every request starts.
            try await client.send(RequestMessage(id: 1, path: "small", policy: .noCache))
            try await bundle.respond(try await bundle.nextRequest().id, "small")
            let count = 12
            for id in 2...MessageID(count + 1) { try await client.send(RequestMessage(id: id, path: "large/\(id)", policy: .noCache)) }
            let large = Data(repeating: 0x61, count: 600_000)
            for _ in 0..<count { try await bundle.respond(try await bundle.nextRequest().id, bytes: large) }
            client.startReading()
            #expect(text(try await client.answer(1)) == "small")
            var bodies = 0
            var refused = 0
            for id in 2...MessageID(count + 1) {
                let answer = try await client.answer(id)
                if case .response(let response) = answer, response.body == large {
                    bodies += 1
                } else if code(answer) == "overloaded" {
                    refused += 1
                } else {
                    Issue.record("request \(id): \(answer)")
                }
            }
            #expect(bodies >= 1 && refused >= 1, "\(bodies) bodies, \(refused) refused")
            #expect(bodies + refused == count)
            #expect(await CoordinatorActor.run { cluster.coordinator.overloadedRequests } == refused)
            try await client.send(RequestMessage(id: 100, path: "after", policy: .noCache))
            try await bundle.respond(try await bundle.nextRequest().id, "after")
            #expect(text(try await client.answer(100)) == "after", "the connection still serves")
        }
    }

    @Test("A request cancelled before it is sent in the slot it was given never reaches the worker, and frees the slot")
    func cancelledBeforeSending() async throws {
        try await InProcessCluster.with("domains: { docs: [bundle] }\nroutes: [{ match: \"...\", domain: docs }]") { cluster in
            let bundle = try await cluster.worker(kind: "bundle", name: "bundle-a", capacity: 1)
            let session = try #require(await CoordinatorActor.run { cluster.coordinator.pools["bundle"]?.workers.first })
            let reply = await Task { @CoordinatorActor in
                withUnsafeCurrentTask { $0?.cancel() }
                session.reserve(host: "")
                #expect(!session.isIdle, "a worker with a slot promised is not idle: scaling down waits for it")
                return await session.forward(Request(path: "cancelled"), host: "")
            }.value
            guard case .answered(.failure(let failure)) = reply else {
                Issue.record("expected a cancelled failure, got \(reply)")
                return
            }
            #expect(failure.code == "cancelled")
            #expect(await CoordinatorActor.run { session.load } == 0, "the slot is free again")
            let client = try await cluster.client()
            try await client.send(RequestMessage(id: 1, path: "served", policy: .noCache))
            let request = try await bundle.nextRequest()
            #expect(request.path == "served", "the cancelled request never reached the worker")
            try await bundle.respond(request.id, "served")
            #expect(text(try await client.answer(1)) == "served")
        }
    }

    @Test("A request cancelled while it waits for a worker's slot leaves no empty queue behind")
    func cancelledWaitersLeaveNoQueue() async throws {
        try await InProcessCluster.with("domains: { docs: [bundle] }\nroutes: [{ match: \"...\", domain: docs }]") { cluster in
            let bundle = try await cluster.worker(kind: "bundle", name: "bundle-a", capacity: 1)
            let client = try await cluster.client()
            try await client.send(RequestMessage(id: 1, path: "held", policy: .noCache))
            let held = try await bundle.nextRequest()
            try await client.send(RequestMessage(id: 2, path: "waits", policy: .noCache))
            let pool = { @Sendable in await CoordinatorActor.run { cluster.coordinator.pools["bundle"].map { ($0.waitingCount, $0.waitingQueueCount) } } }
            try await eventually("request 2 to wait for the slot") { await pool()?.0 == 1 }
            try await client.send(.cancel(CancelMessage(id: 2)))
            #expect(code(try await client.answer(2)) == "cancelled")
            try await eventually("the waiting queue to go") { await pool()?.1 == 0 }
            #expect(await pool()?.0 == 0)
            try await bundle.respond(held.id, "held")
            #expect(text(try await client.answer(1)) == "held")
        }
    }

    @Test("A scale above limits.workers is refused, and so is any scale while the coordinator drains")
    func scaleBounds() async throws {
        try await InProcessCluster.with("domains: { docs: [bundle] }\nroutes: [{ match: \"...\", domain: docs }]\nlimits: { workers: 8 }") { cluster in
            let client = try await cluster.client()
            try await client.send(.scale(ScaleMessage(id: 1, kind: "bundle", count: 9)))
            guard case .failure(let tooMany) = try await client.answer(1) else {
                Issue.record("a scale past limits.workers was not refused")
                return
            }
            #expect(tooMany.error.code == "invalidRequest" && tooMany.error.message.contains("limits.workers"), "\(tooMany)")
            try await client.send(.scale(ScaleMessage(id: 2, kind: "bundle", count: 8)))
            #expect(code(try await client.answer(2)) == "invalidRequest", "within the bound: refused only as no workers are started here")
            await CoordinatorActor.run { cluster.coordinator.draining = true }
            try await client.send(.scale(ScaleMessage(id: 3, kind: "bundle", count: 1)))
            #expect(code(try await client.answer(3)) == "shuttingDown")
            await CoordinatorActor.run { cluster.coordinator.draining = false }
        }
    }

    @Test("A client that leaves mid-request: its worker is told to cancel, and other clients are served")
    func clientLeaves() async throws {
        try await InProcessCluster.with("domains: { docs: [bundle] }\nroutes: [{ match: \"...\", domain: docs }]") { cluster in
            let bundle = try await cluster.worker(kind: "bundle", name: "bundle-a")
            let leaving = try await cluster.client()
            try await leaving.send(RequestMessage(id: 1, path: "slow", policy: .noCache))
            let abandoned = try await bundle.nextRequest()
            await leaving.connection.close()
            guard case .cancel(let cancel) = try await bundle.nextOther() else {
                Issue.record("no cancel")
                return
            }
            #expect(cancel.id == abandoned.id)
            let staying = try await cluster.client()
            try await staying.send(RequestMessage(id: 1, path: "fast"))
            let request = try await bundle.nextRequest()
            try await bundle.respond(request.id, "served")
            #expect(text(try await staying.answer(1)) == "served")
        }
    }

    @Test("An unknown route, a malformed frame, and a second hello: clear errors, and only the offender is closed")
    func badInput() async throws {
        try await InProcessCluster.with("domains: { docs: [bundle] }\nroutes: [{ match: \"docs/...\", domain: docs }]") { cluster in
            let bundle = try await cluster.worker(kind: "bundle", name: "bundle-a")
            let good = try await cluster.client()
            try await good.send(RequestMessage(id: 1, path: "elsewhere/x"))
            #expect(code(try await good.answer(1)) == "noRoute")
            // Bytes that are no message need a socket.
            let bad = try await cluster.client(over: .socket)
            try await bad.send(payload: Array("{not json".utf8))
            #expect(await bad.closed(), "the offender is closed")
            try await good.send(.hello(Hello(role: .client)))
            #expect(await good.closed(), "a second hello is a protocol error")
            let other = try await cluster.client()
            try await other.send(RequestMessage(id: 5, path: "docs/a"))
            let request = try await bundle.nextRequest()
            try await bundle.respond(request.id, "fine")
            #expect(text(try await other.answer(5)) == "fine")
        }
    }

    @Test("With a token configured, an in-process connection needs it too, in memory as on a socket")
    func tokenRequired() async throws {
        try await InProcessCluster.with("auth: { token: s3cret }\ndomains: { docs: [bundle] }") { cluster in
            await #expect(throws: (any Error).self) { _ = try await cluster.connect(as: .client) }
            _ = try await cluster.connect(as: .client, hello: Hello(role: .client, token: "s3cret"))
            let coordinator = cluster.coordinator
            await #expect(throws: ProtocolError.self) { _ = try await CoordinatorActor.run { try coordinator.attachInMemoryClient() } }
            let end = try await CoordinatorActor.run { try coordinator.attachInMemoryClient(token: "s3cret") }
            let client = TestClient(connection: try await InMemoryLink(end))
            try await client.send(.ping(PingMessage(id: 3)))
            #expect(try await client.next { $0.id == 3 } == .pong(PongMessage(id: 3)))
        }
    }

    @Test("Bodies cross intact between peers that agreed to raw bodies and peers that did not, each in its own form")
    func rawAndPlainBodies() async throws {
        try await InProcessCluster.with(InProcessCluster.cachedDocs) { cluster in
            let binary = Data((0...255).map { UInt8($0) } + [0xC0, 0xAF])
            let cache = try await cluster.worker(kind: "cache", name: "cache-plain")
            let bundle = try await cluster.worker(kind: "bundle", name: "bundle-raw", features: [WireFeature.rawBodies])
            let raw = try await cluster.connect(
                as: .client, hello: Hello(role: .client, features: ["someday", WireFeature.rawBodies]))
            let plain = try await cluster.connect(as: .client, hello: Hello(role: .client))
            #expect(raw.connection.codec.rawBodies && !plain.connection.codec.rawBodies)

            // Raw client ← raw bundle, and the write-back to a plain cache.
            try await raw.send(.request(RequestMessage(id: 1, path: "a.bin")))
            let missed = try await cache.nextRequest()
            try await cache.miss(missed.id)
            let fromBundle = try await bundle.nextRequest()
            try await bundle.respond(fromBundle.id, bytes: binary)
            let rawPayload = try #require(try await raw.nextFrame())
            #expect(rawPayload.first == 0x01, "the raw client gets the body raw")
            guard case .response(let rawAnswer) = try raw.connection.codec.decode(rawPayload) else {
                Issue.record("not a response")
                return
            }
            #expect(rawAnswer.id == 1 && rawAnswer.body == binary)
            guard case .store(let store) = try await cache.nextOther() else {
                Issue.record("no write-back")
                return
            }
            #expect(store.body == binary)
            try await cache.connection.send(.result(ResultMessage(id: store.id)))

            // Plain client ← plain cache hit.
            try await plain.send(.request(RequestMessage(id: 2, path: "b.bin")))
            let hit = try await cache.nextRequest()
            try await cache.connection.send(.response(ResponseMessage(id: hit.id, status: 200, source: "cache", body: binary)))
            let plainPayload = try #require(try await plain.nextFrame())
            #expect(plainPayload.first == UInt8(ascii: "{"), "the plain client gets JSON")
            guard case .response(let plainAnswer) = try plain.connection.codec.decode(plainPayload) else {
                Issue.record("not a response")
                return
            }
            #expect(plainAnswer.id == 2 && plainAnswer.body == binary)
        }
    }

    @Test("Pipelined requests refused before their trip and requests on a trip: each answered once, the client's share kept")
    func refusedAndTravellingRequestsPipelined() async throws {
        try await InProcessCluster.with("domains: { docs: [bundle] }\nroutes: [{ match: \"docs/...\", domain: docs }]\nlimits: { inFlightPerClient: 4096 }") { cluster in
            let bundle = try await cluster.worker(kind: "bundle", name: "bundle-a")
            let client = try await cluster.client()
            // 3,000 refused at once (no route), three travelling, interleaved.
            for id in 1...3_000 {
                try await client.send(RequestMessage(id: MessageID(id), path: id % 1_000 == 0 ? "docs/\(id)" : "nowhere/\(id)"))
            }
            for id in 1...3_000 where id % 1_000 != 0 {
                #expect(code(try await client.answer(MessageID(id))) == "noRoute")
            }
            for _ in 1...3 {
                let request = try await bundle.nextRequest()
                try await bundle.respond(request.id, request.path)
            }
            for id in [1_000, 2_000, 3_000] {
                #expect(text(try await client.answer(MessageID(id))) == "docs/\(id)")
            }
            let (inFlight, flights) = await CoordinatorActor.run {
                (cluster.coordinator.clients.values.map { $0.callsInFlight }, cluster.coordinator.flights.count)
            }
            #expect(inFlight == [0] && flights == 0, "nothing is left in flight")
        }
    }
}
