import Monarch
@testable import MonarchCoordinator
import MonarchWire
import Testing

/// The coordinator's judgements of time — heartbeats, idle clients — made on the clock it is
/// given: a test moves it, and nothing waits for real seconds to pass.
@Suite("Time judged on the coordinator's clock")
struct CoordinatorClockTests {
    /// The session of the worker that said its name was `name`, if it is in its pool. 
    @CoordinatorActor
    static func session(_ name: String, of coordinator: Coordinator) -> WorkerSession? {
        coordinator.pools["bundle"]?.workers.first { $0.hello.name == name }
    }

    /// The cached docs, with a heartbeat whose real timer never fires while a test runs: the
    /// tests beat by hand.
    static let beatenByHand = InProcessCluster.cachedDocs + """

        limits:
          heartbeat: 3600s
        """

    /// Runs a heartbeat now, and waits until the worker `talker` (which answers pings) has been
    /// heard at the clock's time, when it was pinged.
    static func beat(_ cluster: InProcessCluster, _ clock: TestClock) async throws {
        let coordinator = cluster.coordinator
        await CoordinatorActor.run { coordinator.checkHeartbeats() }
        try await eventually("the talker's pong") {
            await CoordinatorActor.run { session("talker", of: coordinator)?.lastHeard == clock.now }
        }
    }

    /// Runs `body` on a cluster beaten by hand on a test clock, with a `talker` worker that
    /// answers pings and a `mute` one that does not, after a first beat that heard the talker.
    static func withTalkerAndMute(
        _ body: @Sendable (InProcessCluster, TestClock, HeartbeatJudge) async throws -> Void
    ) async throws {
        let clock = TestClock()
        try await InProcessCluster.with(Self.beatenByHand, clock: clock.clock) { cluster in
            let coordinator = cluster.coordinator
            _ = try await cluster.worker(kind: "bundle", name: "talker")
            _ = try await cluster.worker(kind: "bundle", name: "mute", answersPings: false)
            let judge = await CoordinatorActor.run { coordinator.heartbeatJudge }
            try await beat(cluster, clock)
            try await body(cluster, clock, judge)
        }
    }

    @Test("A worker silent for two beats and a little more of the coordinator's clock is taken out of rotation; one answering its pings stays")
    func silentWorkerIsJudged() async throws {
        try await Self.withTalkerAndMute { cluster, clock, judge in
            let coordinator = cluster.coordinator
            clock.advance(by: judge.interval)
            try await Self.beat(cluster, clock)
            // Silent for exactly the allowed silence: not yet a suspect.
            clock.advance(by: judge.allowedSilence - judge.interval)
            try await Self.beat(cluster, clock)
            #expect(await CoordinatorActor.run { coordinator.unresponsiveWorkers } == 0)
            #expect(await CoordinatorActor.run { Self.session("mute", of: coordinator)?.isUnresponsive } == false)
            // A millisecond more, and the mute worker is out; the talker, heard at each beat, stays.
            clock.advance(by: .milliseconds(1))
            try await Self.beat(cluster, clock)
            try await eventually("the mute worker judged") {
                await CoordinatorActor.run { coordinator.unresponsiveWorkers } == 1
            }
            try await eventually("the mute worker gone from its pool") {
                await CoordinatorActor.run { Self.session("mute", of: coordinator) == nil }
            }
            #expect(await CoordinatorActor.run { Self.session("talker", of: coordinator)?.isUnresponsive } == false)
        }
    }

    @Test("A beat that comes more than half an interval late judges nobody, however long the silence; the next beat on time does")
    func lateBeatJudgesNobody() async throws {
        try await Self.withTalkerAndMute { cluster, clock, judge in
            let coordinator = cluster.coordinator
            // The coordinator's loop was held up for many intervals: its own silence, not the workers'.
            clock.advance(by: judge.allowedSilence * 4)
            try await Self.beat(cluster, clock)
            #expect(await CoordinatorActor.run { coordinator.heartbeatJudge.lateBeats } == 1)
            #expect(await CoordinatorActor.run { coordinator.unresponsiveWorkers } == 0)
            #expect(await CoordinatorActor.run { Self.session("mute", of: coordinator)?.isUnresponsive } == false)
            // The next beat, on time, judges the mute worker.
            clock.advance(by: judge.interval)
            try await Self.beat(cluster, clock)
            try await eventually("the mute worker judged") {
                await CoordinatorActor.run { coordinator.unresponsiveWorkers } == 1
            }
        }
    }

    @Test("A client that has sent nothing for limits.idleTimeout of the coordinator's clock is closed by the next maintenance pass")
    func idleClientIsClosed() async throws {
        let clock = TestClock()
        try await InProcessCluster.with(InProcessCluster.cachedDocs, clock: clock.clock) { cluster in
            let coordinator = cluster.coordinator
            let client = try await cluster.client()
            let timeout = await CoordinatorActor.run { coordinator.limits.idleTimeout }
            #expect(timeout >= .seconds(60), "far longer than this test runs in real time")
            clock.advance(by: timeout + .milliseconds(1))
            // The maintenance pass runs once a second, in real time.
            #expect(await client.closed())
            #expect(await CoordinatorActor.run { coordinator.idleClientsClosed } == 1)
        }
    }

    @Test("A request retried after its worker was lost carries the budget left on the coordinator's clock")
    func budgetLeftAfterWorkerLoss() async throws {
        let clock = TestClock()
        // An hour: the deadline's libuv timer fires in real time, and must not on a loaded machine.
        let yaml = """
            domains:
              docs: [bundle]
            routes:
              - match: "..."
                domain: docs
                timeout: 3600s
            """
        try await InProcessCluster.with(yaml, clock: clock.clock) { cluster in
            let first = try await cluster.worker(kind: "bundle", name: "first")
            let client = try await cluster.client()
            try await client.send(RequestMessage(id: 1, path: "hello.txt", deadlineMs: 3_600_000))
            let forwarded = try await first.nextRequest()
            #expect(forwarded.deadlineMs == 3_600_000)
            let second = try await cluster.worker(kind: "bundle", name: "second")
            // Ten minutes of the hour pass before the first worker goes away without answering.
            clock.advance(by: .seconds(600))
            await first.die()
            let retried = try await second.nextRequest()
            #expect(retried.deadlineMs == 3_000_000, "the retry gets what is left of the hour")
            try await second.respond(retried.id, "in time")
            #expect(text(try await client.answer(1)) == "in time")
        }
    }
}
