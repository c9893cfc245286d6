import Logging
import Monarch
@testable import MonarchCoordinator
import MonarchLoop
import MonarchWire
import Synchronization
import Testing

@Suite struct ScalePlanTests {
    typealias Worker = ScalePlan.Worker

    static func worker(_ ordinal: Int, registered: Bool = true, leaving: Bool = false, stopped: Bool = false) -> Worker {
        Worker(name: "network-\(ordinal)", ordinal: ordinal, registered: registered, leaving: leaving, stopRequested: stopped)
    }

    @Test("Growing starts no more than the room admission leaves, and keeps leaving workers not yet told to stop first")
    func growing() {
        let pool = [Self.worker(1), Self.worker(2, leaving: true), Self.worker(3, leaving: true, stopped: true)]
        let plan = ScalePlan.next(toward: 40, workers: pool, startRoom: 6)
        #expect(plan.keep == ["network-2"])
        #expect(plan.start == 6)
        #expect(plan.leave.isEmpty)
        #expect(ScalePlan.next(toward: 2, workers: pool, startRoom: 6) == ScalePlan(keep: ["network-2"]))
        #expect(ScalePlan.next(toward: 3, workers: pool, startRoom: 0).start == 0)
    }

    @Test("Shrinking chooses workers still starting before registered ones, and registered ones only down to the target")
    func shrinking() {
        let pool = [Self.worker(1), Self.worker(2), Self.worker(3, registered: false), Self.worker(4, registered: false)]
        #expect(ScalePlan.next(toward: 3, workers: pool, startRoom: 8).leave == ["network-4"])
        #expect(ScalePlan.next(toward: 2, workers: pool, startRoom: 8).leave == ["network-4", "network-3"])
        #expect(ScalePlan.next(toward: 1, workers: pool, startRoom: 8).leave == ["network-4", "network-3", "network-2"])
        #expect(ScalePlan.next(toward: 0, workers: pool, startRoom: 8).leave.count == 4)
        #expect(ScalePlan.next(toward: 4, workers: pool, startRoom: 8).isEmpty, "the starting ones are on their way")
    }

    @Test("Done means the target staying, every one registered, none left going")
    func done() {
        #expect(ScalePlan.isDone(2, workers: [Self.worker(1), Self.worker(2)]))
        #expect(!ScalePlan.isDone(2, workers: [Self.worker(1), Self.worker(2, registered: false)]))
        #expect(!ScalePlan.isDone(1, workers: [Self.worker(1), Self.worker(2, leaving: true, stopped: true)]))
        #expect(ScalePlan.isDone(0, workers: []))
    }

    @Test("The start bound is limits.workerStarts, within half the handshake slots and never 0; the room within limits.workers")
    func bounds() {
        #expect(ScalePlan.startBound(workerStarts: 8, handshakes: 128) == 8)
        #expect(ScalePlan.startBound(workerStarts: 8, handshakes: 6) == 3)
        #expect(ScalePlan.startBound(workerStarts: 8, handshakes: 1) == 1)
        #expect(ScalePlan.startRoom(bound: 8, starting: 3, workerRoom: 100) == 5)
        #expect(ScalePlan.startRoom(bound: 8, starting: 3, workerRoom: 2) == 2)
        #expect(ScalePlan.startRoom(bound: 8, starting: 9, workerRoom: 2) == 0)
    }

    /// A pool run by plans while targets change and workers register and exit at random.
    struct Simulation {
        var workers: [Worker] = (1...2).map { ScalePlanTests.worker($0) }
        var target = 2
        var nextOrdinal = 3
        var generator = SplitMix(seed: 26)

        var serving: Int { workers.filter { $0.registered && !$0.leaving }.count }
        var starting: Int { workers.filter { !$0.registered }.count }

        /// One plan step, as the run takes it: plan, apply, stop the leaving ones.
        mutating func step(bound: Int) -> ScalePlan {
            let plan = ScalePlan.next(toward: target, workers: workers, startRoom: ScalePlan.startRoom(bound: bound, starting: starting, workerRoom: 1000))
            for index in workers.indices where plan.keep.contains(workers[index].name) { workers[index].leaving = false }
            for _ in 0..<plan.start {
                workers.append(ScalePlanTests.worker(nextOrdinal, registered: false))
                nextOrdinal += 1
            }
            for index in workers.indices where plan.leave.contains(workers[index].name) { workers[index].leaving = true }
            // Drained at random: told to stop.
            for index in workers.indices where workers[index].leaving && generator.next() % 3 == 0 {
                workers[index].stopRequested = true
            }
            return plan
        }

        /// Something happens: a worker registers, or a stopped one exits.
        mutating func event() {
            let index = Int(generator.next() % UInt64(max(workers.count, 1)))
            guard workers.indices.contains(index) else { return }
            if workers[index].stopRequested {
                workers.remove(at: index)
            } else if !workers[index].registered {
                workers[index].registered = true
            }
        }
    }

    @Test("Under a storm of targets from 1 to 5, the workers serving never drop below the smaller of before and the target, starts stay within the bound, and the pool ends at the last target")
    func storm() {
        var simulation = Simulation()
        let bound = 3
        for round in 0..<2000 {
            if round < 1500 && simulation.generator.next() % 7 == 0 {
                simulation.target = Int(simulation.generator.next() % 5) + 1
            }
            let before = simulation.serving
            _ = simulation.step(bound: bound)
            #expect(simulation.serving >= min(before, simulation.target), "round \(round): \(simulation.workers)")
            #expect(simulation.workers.filter { !$0.registered && !$0.leaving }.count <= bound)
            for _ in 0..<Int(simulation.generator.next() % 3) { simulation.event() }
            #expect(simulation.serving >= min(before, simulation.target), "round \(round), after events")
        }
        #expect(ScalePlan.isDone(simulation.target, workers: simulation.workers), "\(simulation.workers)")
    }

    @Test("Every caller is told where the pool ended; one whose size a later scale replaced says so and what it asked for")
    func reports() {
        let final = [("network-1", 1), ("network-2", 2), ("network-3", 3)]
        let last = ScaleRun.report(
            kind: "network", for: (requested: 3, previous: 5, before: ["network-1", "network-4", "network-5"]), target: 3,
            final: final, remote: 1)
        #expect(last == ScaleReport(
            kind: "network", count: 3, previous: 5, started: ["network-2", "network-3"], stopped: ["network-5", "network-4"], remote: 1))
        let replaced = ScaleRun.report(
            kind: "network", for: (requested: 5, previous: 1, before: ["network-1"]), target: 3, final: final, remote: 0)
        #expect(replaced.superseded == true && replaced.requested == 5 && replaced.count == 3)
        #expect(replaced.started == ["network-2", "network-3"])
    }

    @Test("A pool's scale run lives in its supervisor: callers join it, and are answered at once when it ends; the next scale makes a new one")
    func runsLiveInTheSupervisor() async throws {
        let loop = CoordinatorActor.loop
        let supervisor = await CoordinatorActor.run {
            Supervisor(
                configuration: ReloadPlanTests.running, policy: RestartPolicy(intensity: 3, window: .seconds(5)), environment: nil,
                workerKeys: LocalWorkerKeys(), logger: Logger(label: "scale-runs"), clock: .system
            ) { _, _ in fatalError("no worker starts in this test") }
        }
        let joins = Mutex<[(joined: Bool, isNew: Bool)]>([])
        // Joins the run of pool `kind` as the caller of scale `id` asking for `requested`, and waits for its answer.
        let scale: @Sendable (MessageID, Int, String) async -> WireMessage = { id, requested, kind in
            await withCheckedContinuation { continuation in
                loop.execute {
                    let caller = ScaleRun.Caller(id: id, requested: requested, previous: 1, before: ["bundle-1"], continuation: continuation)
                    let joined = CoordinatorActor.assumeIsolated { supervisor.joinRun(caller, of: kind) }
                    joins.withLock { $0.append(joined) }
                    if !joined.joined {
                        continuation.resume(returning: .failure(FailureMessage(id: id, error: ChainError(.invalidRequest, "none").detail)))
                    }
                }
            }
        }
        #expect(await scale(9, 1, "nonesuch").failureCode == .invalidRequest, "a kind the supervisor has no pool of has no run")
        let first = Task { await scale(1, 3, "bundle") }
        try await eventually("the first scale to join") { joins.withLock { $0.count } >= 2 }
        let second = Task { await scale(2, 2, "bundle") }
        try await eventually("the second scale to join") { joins.withLock { $0.count } >= 3 }
        #expect(joins.withLock { $0.map(\.joined) } == [false, true, true])
        #expect(joins.withLock { $0.map(\.isNew) } == [false, true, false], "the second scale joins the run the first made")
        await CoordinatorActor.run {
            supervisor.endRun(of: "bundle", .finished(target: 2, final: [("bundle-1", 1), ("bundle-2", 2)], remote: 0))
        }
        let answered = await second.value
        let replaced = await first.value
        #expect(answered.scaleReport == ScaleReport(kind: "bundle", count: 2, previous: 1, started: ["bundle-2"], stopped: [], remote: 0))
        #expect(replaced.scaleReport?.superseded == true && replaced.scaleReport?.requested == 3)
        let third = Task { await scale(3, 1, "bundle") }
        try await eventually("the third scale to join") { joins.withLock { $0.count } >= 4 }
        #expect(joins.withLock { $0.last?.isNew } == true, "an ended run is forgotten: the next scale makes a new run")
        await CoordinatorActor.run { supervisor.endRun(of: "bundle", .failed(.unavailable, "gave up")) }
        #expect(await third.value.failureCode == .unavailable)
    }

    @Test("A scale that comes before the cluster's start has launched its workers is refused as unavailable, and changes nothing")
    func scaleBeforeStartUpIsRefused() async throws {
        let loop = CoordinatorActor.loop
        let coordinator = try await CoordinatorActor.run {
            let coordinator = try Coordinator(configuration: ReloadPlanTests.running, logger: Logger(label: "scale-before-start"))
            coordinator.supervisor = Supervisor(
                configuration: ReloadPlanTests.running, policy: RestartPolicy(intensity: 3, window: .seconds(5)), environment: nil,
                workerKeys: LocalWorkerKeys(), logger: Logger(label: "scale-before-start"), clock: .system
            ) { pool, ordinal in
                // Were one launched, it would fail: no such executable.
                WorkerLaunch(kind: pool.kind, ordinal: ordinal, name: "\(pool.kind)-\(ordinal)", executable: "/nonexistent", arguments: [])
            }
            return coordinator
        }
        let answer = await Task(executorPreference: loop) {
            await coordinator.scale(ScaleMessage(id: 1, kind: "bundle", count: 2))
        }.value
        #expect(answer.failureCode == .unavailable)
        if case .failure(let failure) = answer {
            #expect(failure.error.message.contains("still starting"), "\(failure.error.message)")
        }
        let (desired, slots) = await CoordinatorActor.run {
            let pool = coordinator.supervisor!.poolState("bundle")
            return (pool?.desired, pool?.slots.count)
        }
        #expect(desired == 1, "the configured size stands")
        #expect(slots == 0, "no worker was added for the scale")
        await CoordinatorActor.run { coordinator.close() }
        ClosedCoordinators.keep(coordinator)
    }
}

extension WireMessage {
    /// The scale report of a `result`.
    fileprivate var scaleReport: ScaleReport? {
        guard case .result(let result) = self else { return nil }
        return try? result.report(as: ScaleReport.self)
    }

    /// The code of a `failure`.
    fileprivate var failureCode: ChainError.Code? {
        guard case .failure(let failure) = self else { return nil }
        return failure.error.code
    }
}

/// A small seeded random generator, so a failing storm can be replayed.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
