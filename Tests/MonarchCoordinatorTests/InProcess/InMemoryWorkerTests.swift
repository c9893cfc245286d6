#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
@testable import MonarchCoordinator
import MonarchTransport
import MonarchWire
import Testing

/// Worker sessions over an in-memory connection (``Coordinator/attachInMemoryWorker(_:)``):
/// scripted workers that receive the coordinator's messages as values, and answer the same way,
/// go through what a worker on a socket goes through — admission, routing, answers, loss,
/// deadlines, protocol errors.
@Suite("Workers in memory")
struct InMemoryWorkerTests {
    /// One domain served by bundle workers alone.
    static let bundleDocs = "domains: { docs: [bundle] }\nroutes: [{ match: \"...\", domain: docs }]"

    /// The session of the `kind` worker named `name`, if it is in its pool. 
    @CoordinatorActor
    static func session(_ name: String, kind: String = "bundle", of coordinator: Coordinator) -> WorkerSession? {
        coordinator.pools[kind]?.workers.first { $0.hello.name == name }
    }

    @Test("A miss at an in-memory cache worker goes on to an in-memory bundle; the answer reaches an in-memory client and is written back")
    func chainOverInMemoryWorkers() async throws {
        try await InProcessCluster.with(InProcessCluster.cachedDocs) { cluster in
            let cache = try await cluster.worker(kind: "cache", name: "cache-a", over: .inMemory)
            let bundle = try await cluster.worker(kind: "bundle", name: "bundle-a", over: .inMemory)
            let onMemory = await CoordinatorActor.run {
                Self.session("cache-a", kind: "cache", of: cluster.coordinator)?.connection is InMemoryConnection
            }
            #expect(onMemory, "the session's connection is the in-memory end")
            let client = try await cluster.client()
            try await client.send(RequestMessage(id: 1, path: "guide.txt"))
            let atCache = try await cache.nextRequest()
            #expect(atCache.path == "guide.txt" && atCache.key != nil)
            try await cache.miss(atCache.id)
            let atBundle = try await bundle.nextRequest()
            try await bundle.respond(atBundle.id, "the guide", headers: ["x-from": "memory"])
            guard case .response(let answer) = try await client.answer(1) else {
                Issue.record("request 1 was not answered with a response")
                return
            }
            #expect(answer.body == Data("the guide".utf8) && answer.headers?["x-from"] == "memory")
            // The write-back is an admin exchange: its `result` comes back over the same connection.
            guard case .store(let store) = try await cache.nextOther() else {
                Issue.record("no write-back")
                return
            }
            #expect(store.key == atCache.key && store.body == Data("the guide".utf8))
            try await cache.connection.send(.result(ResultMessage(id: store.id)))
            try await eventually("the cache worker idle again") {
                await CoordinatorActor.run { Self.session("cache-a", kind: "cache", of: cluster.coordinator)?.isIdle == true }
            }
            let counts = await CoordinatorActor.run {
                Self.session("bundle-a", of: cluster.coordinator).map { ($0.forwarded, $0.answered) }
            }
            #expect(counts?.0 == 1 && counts?.1 == 1, "the bundle was sent one request and answered it")
        }
    }

    @Test("A hello the coordinator would refuse is refused in memory too, and registers nothing")
    func admission() async throws {
        let yaml = Self.bundleDocs + "\nauth: { workerToken: w0rker }\nlimits: { workers: 2 }"
        try await InProcessCluster.with(yaml) { cluster in
            let coordinator = cluster.coordinator
            func attach(_ hello: Hello) async throws -> ProtocolError? {
                await CoordinatorActor.run {
                    do throws(ProtocolError) {
                        _ = try coordinator.attachInMemoryWorker(hello)
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            let worker = { (name: String, token: String?) in
                Hello(role: .worker, token: token, kind: "bundle", pid: 1, name: name)
            }
            #expect(try await attach(worker("a", nil))?.code == .unauthorized)
            #expect(try await attach(worker("a", "wrong"))?.code == .unauthorized)
            #expect(try await attach(Hello(role: .client, token: "w0rker"))?.code == .unexpectedMessage)
            #expect(try await attach(worker("no spaces", "w0rker"))?.code == .invalidField)
            #expect(await CoordinatorActor.run { coordinator.workerConnections } == 0, "nothing was let in")
            #expect(try await attach(worker("a", "w0rker")) == nil)
            #expect(try await attach(worker("a", "w0rker"))?.code == .unexpectedMessage, "the name is taken")
            #expect(try await attach(worker("b", "w0rker")) == nil)
            let refused = try await attach(worker("c", "w0rker"))
            #expect(refused?.message.contains("limits.workers") == true, "\(String(describing: refused))")
            #expect(await CoordinatorActor.run { coordinator.pools["bundle"]?.workers.map(\.id).sorted() } == ["a", "b"])
        }
    }

    @Test("A worker that ends mid-request, in memory or on a socket: the GET is asked again of another, the POST fails as workerLost and is not sent twice",
          arguments: [PeerTransport.inMemory, .socket])
    func workerEndsMidRequest(_ transport: PeerTransport) async throws {
        try await InProcessCluster.with(Self.bundleDocs) { cluster in
            let first = try await cluster.worker(kind: "bundle", name: "bundle-a", over: transport)
            let client = try await cluster.client()
            try await client.send(RequestMessage(id: 1, path: "read"))
            try await client.send(RequestMessage(id: 2, path: "write", method: "POST", body: Data("x".utf8)))
            _ = try await first.nextRequest()
            _ = try await first.nextRequest()
            let second = try await cluster.worker(kind: "bundle", name: "bundle-b", over: transport)
            #expect(await CoordinatorActor.run { cluster.coordinator.workerConnections } == 2)
            await first.die()
            let retried = try await second.nextRequest()
            #expect(retried.path == "read")
            try await second.respond(retried.id, "read again")
            #expect(text(try await client.answer(1)) == "read again")
            guard case .failure(let post) = try await client.answer(2) else {
                Issue.record("the POST was answered, not failed")
                return
            }
            let lost = post.error.attempts?.first { $0.code == "workerLost" }
            #expect(lost?.message?.contains("bundle-a (pid 1) disconnected: connection closed") == true, "\(post)")
            #expect(second.pending.isEmpty, "the POST was not sent again")
            try await eventually("the lost worker's connection given back") {
                await CoordinatorActor.run { cluster.coordinator.workerConnections } == 1
            }
            #expect(await CoordinatorActor.run { Self.session("bundle-a", of: cluster.coordinator) } == nil)
        }
    }

    @Test("An in-memory worker that does not answer: the client gets deadlineExceeded, the worker a cancel, and past the grace on the coordinator's clock its slot is freed")
    func workerMissesTheDeadline() async throws {
        let clock = TestClock()
        try await InProcessCluster.with(Self.bundleDocs, clock: clock.clock) { cluster in
            let coordinator = cluster.coordinator
            let bundle = try await cluster.worker(kind: "bundle", name: "bundle-a", over: .inMemory)
            let client = try await cluster.client()
            try await client.send(RequestMessage(id: 1, path: "slow", policy: .noCache, deadlineMs: 200))
            let forwarded = try await bundle.nextRequest()
            #expect(forwarded.deadlineMs == 200, "the coordinator's clock stands still: the whole deadline is left")
            guard case .failure(let failure) = try await client.answer(1) else {
                Issue.record("request 1 was answered, not failed")
                return
            }
            #expect(failure.error.code == .deadlineExceeded)
            #expect(failure.error.attempts?.last?.provider == "bundle" && failure.error.attempts?.last?.outcome == .timeout)
            guard case .cancel(let cancel) = try await bundle.nextOther() else {
                Issue.record("no cancel")
                return
            }
            #expect(cancel.id == forwarded.id)
            // The worker never answers the cancel either: its slot is held for the grace, then freed.
            #expect(await CoordinatorActor.run { Self.session("bundle-a", of: coordinator)?.load } == 1)
            clock.advance(by: WorkerSession.cancelGrace + .milliseconds(1))
            try await eventually("the cancelled request forgotten") {
                await CoordinatorActor.run { Self.session("bundle-a", of: coordinator)?.forgotten } == 1
            }
            #expect(await CoordinatorActor.run { Self.session("bundle-a", of: coordinator)?.load } == 0)
            // Its late answer changes nothing; the next request is served.
            try await bundle.respond(forwarded.id, "too late")
            try await client.send(RequestMessage(id: 2, path: "next", policy: .noCache))
            try await bundle.respond(try await bundle.nextRequest().id, "in time")
            #expect(text(try await client.answer(2)) == "in time")
            #expect(await CoordinatorActor.run { Self.session("bundle-a", of: coordinator)?.lateAnswers } == 1)
        }
    }

    @Test("An in-memory worker silent past the allowed silence on the coordinator's clock is taken out of rotation and let go; one answering its pings stays")
    func silentWorkerIsLetGo() async throws {
        let clock = TestClock()
        try await InProcessCluster.with(CoordinatorClockTests.beatenByHand, clock: clock.clock) { cluster in
            let coordinator = cluster.coordinator
            let talker = try await cluster.worker(kind: "bundle", name: "talker", over: .inMemory)
            let mute = try await cluster.worker(kind: "bundle", name: "mute", answersPings: false, over: .inMemory)
            let judge = await CoordinatorActor.run { coordinator.heartbeatJudge }
            try await CoordinatorClockTests.beat(cluster, clock)
            // Beats on time (a late one judges nobody) until the silence is a millisecond too long.
            clock.advance(by: judge.interval)
            try await CoordinatorClockTests.beat(cluster, clock)
            clock.advance(by: judge.allowedSilence - judge.interval + .milliseconds(1))
            try await CoordinatorClockTests.beat(cluster, clock)
            try await eventually("the mute worker judged") {
                await CoordinatorActor.run { coordinator.unresponsiveWorkers } == 1
            }
            #expect(await mute.closed(), "the coordinator closed the mute worker's in-memory end")
            #expect(mute.pending.contains { if case .ping = $0 { true } else { false } }, "it was pinged, in memory")
            #expect(await CoordinatorActor.run { Self.session("talker", of: coordinator)?.isServing } == true)
            #expect(!(await talker.closed(within: 0.05)))
        }
    }

    @Test("An in-memory worker that answers a request never sent is told why, and its connection ends")
    func protocolViolationEndsTheWorker() async throws {
        try await InProcessCluster.with(Self.bundleDocs) { cluster in
            let bundle = try await cluster.worker(kind: "bundle", name: "bundle-a", over: .inMemory)
            try await bundle.respond(999, "unasked")
            guard case .error(let error) = try await bundle.nextOther() else {
                Issue.record("no error message")
                return
            }
            #expect(error.code == .unexpectedMessage && error.id == 999)
            try await eventually("the worker out of its pool") {
                await CoordinatorActor.run { Self.session("bundle-a", of: cluster.coordinator) == nil }
            }
            #expect(await CoordinatorActor.run { cluster.coordinator.workerConnections } == 0)
        }
    }
}
