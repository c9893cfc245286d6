#if canImport(Glibc)
import Glibc
#endif
import Logging
import Monarch
import MonarchConfig
import MonarchLoop
import Synchronization

/// Starts the local worker processes and keeps each pool at its desired size.
///
/// A worker that exits after the cluster was ready is started again as ``RestartPolicy``
/// says — at once for its first few exits, then after a growing back-off — and so is one whose
/// start fails (no descriptors, no memory, a missing executable): a failed start is never the
/// end of a worker. A pool restarted more often than the policy allows is failed: it is left
/// alone, said so in the log and in `status`, until it is scaled again. Pools grow and shrink
/// as the coordinator's scale run (``ScaleRun``) says: ``setDesired(_:to:)`` records the size
/// wanted, ``grow(_:by:)`` starts workers toward it a few at a time, ``leave(_:)`` chooses
/// workers to go, which the run stops once they have drained.
/// Workers keep their names (`bundle-2` stays `bundle-2` across restarts, and a cache worker
/// its file). Workers run in sessions of their own, so a terminal's Ctrl-C reaches only
/// `monarch up`, which drains before it stops them.
///
/// It runs on ``CoordinatorActor``, as the coordinator does, which calls it directly; libuv's
/// callbacks (timers, child exits) enter through `assumeIsolated`, checked when they run, and
/// what leaves is a ``PoolState`` or ``SlotState`` snapshot.
@CoordinatorActor
final class Supervisor {
    /// One local worker: its name, and the process running it, if any.
    final class Slot {
        let launch: WorkerLaunch
        var process: ChildProcess?
        /// Exits in a row without a stable run between them.
        var consecutiveExits = 0
        /// Starts after the first.
        var restarts = 0
        /// Whether its process was ever started.
        var launched = false
        /// When its process last started (or the slot was made), on the supervisor's clock.
        var startedAt: ContinuousClock.Instant
        /// The start scheduled after an exit.
        var restartTimer: LoopTimer?
        /// Chosen to go (scale-down): its exit is expected, not restarted.
        var leaving = false
        /// The SIGKILL scheduled after a stop's grace.
        var killTimer: LoopTimer?
        /// Whether it was told to stop (leaving, and SIGTERM sent or its slot removed): it can no
        /// longer be kept.
        var stopRequested = false
        init(launch: WorkerLaunch, startedAt: ContinuousClock.Instant) {
            self.launch = launch
            self.startedAt = startedAt
        }

        var name: String { launch.name }
    }

    /// The local workers of one kind.
    final class Pool {
        let kind: String
        /// The settings its workers start with; nil for a kind the configuration gives none
        /// (its workers only dial in).
        let settings: Configuration.WorkerPool?
        var desired: Int
        /// Running or restarting, in ordinal order; leaving ones until they exit.
        var slots: [Slot] = []
        /// When its workers were restarted, within the policy's window.
        var restartTimes: [ContinuousClock.Instant] = []
        /// Why the pool was given up on, once it was.
        var failure: String?
        /// The scale callers waiting for the pool to reach ``desired``, while a run is under way.
        var run: ScaleRun?

        init(kind: String, settings: Configuration.WorkerPool?) {
            self.kind = kind
            self.settings = settings
            self.desired = settings?.count ?? 0
        }
    }

    /// A local worker as it is now.
    struct SlotState: Sendable {
        /// Its name (`bundle-2`).
        var name: String
        /// Its place in its pool, from 1.
        var ordinal: Int
        /// The process running it, if one does.
        var pid: Int32?
        /// Starts after the first.
        var restarts: Int
        /// When its process last started.
        var startedAt: ContinuousClock.Instant
        /// Chosen to go (scale-down).
        var leaving: Bool
        /// Told to stop: leaving for good.
        var stopRequested: Bool
    }

    /// A pool of local workers as it is now.
    struct PoolState: Sendable {
        /// Whether the configuration starts its workers (a kind without settings only dials in).
        var launchesWorkers: Bool
        /// Workers wanted.
        var desired: Int
        /// Why the pool was given up on, once it was.
        var failure: String?
        /// Its workers, in ordinal order (leaving ones until they exit).
        var slots: [SlotState]
    }

    /// The loop whose thread the supervisor lives on.
    nonisolated let loop: EventLoop
    private let logger: Logger
    /// The environment of each worker it starts.
    private let environment: WorkerEnvironment
    /// The key each started worker proves its name with.
    private let workerKeys: LocalWorkerKeys
    let policy: RestartPolicy
    /// Where starts and exits are timed (a stable run, the restarts within the policy's
    /// window): the coordinator's clock. Back-off delays are libuv timers, in real time.
    nonisolated let clock: MonotonicClock
    private let makeLaunch: (Configuration.WorkerPool, Int) -> WorkerLaunch
    /// The pools, by kind, and their kinds in configuration order.
    private var pools: [String: Pool] = [:]
    private var kinds: [String] = []
    /// Whether the workers are being stopped: exits are then expected, not restarted.
    var stopping = false
    /// Whether every worker has registered once; before that an exit is a failed start.
    var started = false
    /// The start under way (``startUp(atOnce:ready:failed:exitedEarly:)``), until every worker registered.
    var startup: Startup?
    /// Looks every few seconds for workers that are neither running nor due to restart.
    private var watchdog: LoopTimer?

    /// A supervisor of the pools of `configuration`, starting workers with `makeLaunch` (a
    /// pool's settings and a worker's ordinal, from 1) and restarting them by `policy`, timed
    /// on `clock`.
    init(
        configuration: Configuration, policy: RestartPolicy, environment: [String: String]?, workerKeys: LocalWorkerKeys,
        logger: Logger, clock: MonotonicClock,
        makeLaunch: @escaping (Configuration.WorkerPool, Int) -> WorkerLaunch
    ) {
        self.policy = policy
        self.clock = clock
        self.environment = WorkerEnvironment(configuration: configuration, base: environment)
        self.workerKeys = workerKeys
        self.loop = CoordinatorActor.loop
        self.logger = logger
        self.makeLaunch = makeLaunch
        for settings in configuration.workers {
            pools[settings.kind] = Pool(kind: settings.kind, settings: settings)
            kinds.append(settings.kind)
        }
    }

    /// The workers asked for at start.
    var initialLaunches: [WorkerLaunch] {
        kinds.flatMap { kind in
            let pool = pools[kind]!
            return pool.settings.map { settings in (0..<pool.desired).map { makeLaunch(settings, $0 + 1) } } ?? []
        }
    }

    /// Starts the workers the configuration asks for, at most `atOnce` of them now (at least
    /// 1); ``launchWaiting(upTo:)`` starts the rest as these register.
    ///
    /// - Throws: ``ClusterError`` when an executable is missing or cannot be started.
    func launchAll(atOnce: Int = .max) throws(ClusterError) {
        for launch in initialLaunches {
            guard access(launch.executable, X_OK) == 0 else {
                throw ClusterError("cannot start the \(launch.kind) worker: \(launch.executable) is missing or not executable")
            }
        }
        for kind in kinds {
            let pool = pools[kind]!
            guard let settings = pool.settings else { continue }
            for ordinal in 1...max(pool.desired, 1) where ordinal <= pool.desired {
                pool.slots.append(Slot(launch: makeLaunch(settings, ordinal), startedAt: clock.now))
            }
        }
        _ = try launchWaiting(upTo: max(atOnce, 1))
        if let timer = try? LoopTimer(on: loop) {
            timer.start(afterMs: 5000, repeatMs: 5000) { [unowned self] in CoordinatorActor.assumeIsolated { restartMissing() } }
            watchdog = timer
        }
    }

    /// Starts up to `limit` of the workers asked for at start that have not started yet, in
    /// configuration order, and returns how many it started. Only before every worker has
    /// registered once (``started``); after that the watchdog starts what is missing.
    ///
    /// - Throws: ``ClusterError`` when one cannot be started.
    @discardableResult
    func launchWaiting(upTo limit: Int) throws(ClusterError) -> Int {
        guard !started, !stopping else { return 0 }
        var count = 0
        for pool in allPools {
            for slot in pool.slots where count < limit && !slot.launched && !slot.leaving {
                try launch(slot)
                count += 1
            }
        }
        return count
    }

    // MARK: What runs

    /// Every pool the configuration has, as it is now, in configuration order.
    var poolStates: [(kind: String, state: PoolState)] {
        kinds.compactMap { kind in poolState(kind).map { (kind, $0) } }
    }

    /// The pool of `kind`, as it is now, if the configuration has one.
    func poolState(_ kind: String) -> PoolState? {
        pools[kind].map { pool in
            PoolState(
                launchesWorkers: pool.settings != nil, desired: pool.desired, failure: pool.failure,
                slots: pool.slots.map(Self.state(of:)))
        }
    }

    private static func state(of slot: Slot) -> SlotState {
        SlotState(
            name: slot.name, ordinal: slot.launch.ordinal, pid: slot.process?.pid, restarts: slot.restarts,
            startedAt: slot.startedAt, leaving: slot.leaving, stopRequested: slot.stopRequested)
    }

    /// The slot `id` stands for, while one of the pools holds it (libuv's callbacks carry
    /// identifiers, not the slots themselves, out of the supervisor's isolation).
    private func slot(withID id: ObjectIdentifier) -> Slot? {
        for kind in kinds { if let slot = pools[kind]!.slots.first(where: { ObjectIdentifier($0) == id }) { return slot } }
        return nil
    }

    /// The local worker called `name`, if the supervisor runs one by that name.
    private func slot(named name: String) -> Slot? {
        for kind in kinds { if let slot = pools[kind]!.slots.first(where: { $0.name == name }) { return slot } }
        return nil
    }

    /// The pools, in configuration order.
    private var allPools: [Pool] { kinds.map { pools[$0]! } }

    // MARK: Scaling

    /// The pool of `kind` the configuration launches, or why there is none to scale.
    private func launchedPool(_ kind: String) throws(ClusterError) -> (Pool, Configuration.WorkerPool) {
        guard let pool = pools[kind], let settings = pool.settings else {
            throw ClusterError(
                "the configuration launches no \(kind) workers (workers.\(kind) is missing), so there are none to scale here")
        }
        return (pool, settings)
    }

    /// Makes `count` the number of `kind` workers wanted, replacing any earlier wish, and
    /// returns the number wanted before. Scaling a failed pool clears its failure: its restarts
    /// start afresh. Nothing starts or stops here: the scale run does that (``grow(_:by:)``,
    /// ``leave(_:)``, ``stop(_:grace:)``).
    ///
    /// - Throws: ``ClusterError`` when the configuration has no settings for `kind` (its
    ///   workers only dial in).
    func setDesired(_ kind: String, to count: Int) throws(ClusterError) -> Int {
        let (pool, _) = try launchedPool(kind)
        let previous = pool.desired
        pool.desired = count
        if pool.failure != nil {
            logger.notice("the \(kind) pool is scaled again after it failed: its restarts start afresh")
            pool.failure = nil
            pool.restartTimes.removeAll()
            for slot in pool.slots { slot.consecutiveExits = 0 }
        }
        return previous
    }

    /// Adds `caller` to the scale run under way for `kind`, making the run when none is: whether
    /// it made one (the caller then starts the run's reconcile). False, and nothing done, for
    /// a kind without a pool here.
    func joinRun(_ caller: ScaleRun.Caller, of kind: String) -> (joined: Bool, isNew: Bool) {
        guard let pool = pools[kind] else { return (false, false) }
        let isNew = pool.run == nil
        let run = pool.run ?? ScaleRun(kind: kind)
        pool.run = run
        run.join(caller)
        return (true, isNew)
    }

    /// Ends the scale run under way for `kind`, if any: forgets it (a later scale starts a new
    /// one), then answers its callers as `ending` says.
    func endRun(of kind: String, _ ending: ScaleRun.Ending) {
        guard let run = pools[kind]?.run else { return }
        pools[kind]?.run = nil
        run.end(ending)
    }

    /// Starts up to `limit` workers of `kind` toward its desired size, and returns their
    /// names: first the pool's workers that are neither running nor waiting to restart (its
    /// pool had failed), then new ones at the lowest free ordinals, so names and files come back.
    ///
    /// - Throws: ``ClusterError`` when a worker cannot be started (those started before stay).
    func grow(_ kind: String, by limit: Int) throws(ClusterError) -> [String] {
        let (pool, settings) = try launchedPool(kind)
        var started: [String] = []
        for slot in pool.slots where started.count < limit && !slot.leaving && slot.process == nil && slot.restartTimer == nil {
            try launch(slot)
            started.append(slot.name)
        }
        var ordinals = Set(pool.slots.map(\.launch.ordinal))
        var ordinal = 1
        while started.count < limit && pool.slots.filter({ !$0.leaving }).count < pool.desired {
            while ordinals.contains(ordinal) { ordinal += 1 }
            ordinals.insert(ordinal)
            let slot = Slot(launch: makeLaunch(settings, ordinal), startedAt: clock.now)
            pool.slots.append(slot)
            pool.slots.sort { $0.launch.ordinal < $1.launch.ordinal }
            try launch(slot)
            started.append(slot.name)
        }
        return started
    }

    /// Chooses the workers `names` to go: their exits are expected, not restarted; the run
    /// drains them, then calls ``stop(_:grace:)``.
    func leave(_ names: [String]) {
        for name in names {
            guard let slot = slot(named: name) else { continue }
            slot.leaving = true
            slot.restartTimer?.close()
            slot.restartTimer = nil
        }
    }

    /// Keeps the workers `names`, chosen to go but not yet told to stop, and returns those kept.
    func keep(_ names: [String]) -> [String] {
        names.filter { name in
            guard let slot = slot(named: name), slot.leaving, !slot.stopRequested else { return false }
            slot.leaving = false
            return true
        }
    }

    /// Whether `name` is a local worker chosen to go.
    func isLeaving(_ name: String) -> Bool { slot(named: name)?.leaving ?? false }

    /// Stops `name`, chosen to go by ``leave(_:)``: SIGTERM (it finishes what it has, then
    /// exits), SIGKILL after `grace`. Its slot is removed when it has exited. Once only.
    func stop(_ name: String, grace: Duration = .seconds(10)) {
        guard let slot = slot(named: name), slot.leaving, !slot.stopRequested else { return }
        slot.stopRequested = true
        guard let process = slot.process else { return remove(slot) }
        process.signal(SIGTERM)
        guard let timer = try? LoopTimer(on: loop) else { return }
        slot.killTimer = timer
        let id = ObjectIdentifier(slot)
        timer.start(afterMs: grace.wholeMilliseconds) { [unowned self] in
            CoordinatorActor.assumeIsolated {
                timer.close()
                guard let slot = self.slot(withID: id) else { return }
                slot.killTimer = nil
                if slot.process === process { process.signal(SIGKILL) }
            }
        }
    }

    /// The process id of the local worker `name`, while it runs; nil for a worker the
    /// supervisor does not run.
    func pid(of name: String) -> Int32? {
        slot(named: name)?.process?.pid
    }

    /// Kills `name` at once (it stopped answering); it is restarted as after any exit. False
    /// when the supervisor runs no worker by that name.
    @discardableResult
    func kill(_ name: String) -> Bool {
        guard let slot = slot(named: name) else { return false }
        slot.process?.signal(SIGKILL)
        return true
    }

    private func remove(_ slot: Slot) {
        slot.restartTimer?.close()
        slot.restartTimer = nil
        slot.killTimer?.close()
        slot.killTimer = nil
        pools[slot.launch.kind]?.slots.removeAll { $0 === slot }
        workerKeys.forget(slot.name)
    }

    // MARK: Starting and restarting

    private func launch(_ slot: Slot) throws(ClusterError) {
        do {
            slot.startedAt = clock.now
            slot.launched = true
            // Its own key, beside what it inherits, never on its command line.
            var environment = self.environment.environment(for: slot.launch.kind)
            environment[LocalWorkerKeys.environmentName] = workerKeys.issue(for: slot.name)
            slot.process = try ChildProcess(
                executable: slot.launch.executable, arguments: slot.launch.arguments, environment: environment,
                newSession: true, on: loop
            ) { [unowned self, id = ObjectIdentifier(slot)] exit in
                CoordinatorActor.assumeIsolated {
                    if let slot = self.slot(withID: id) { exited(slot, exit) }
                }
            }
            logger.debug("started \(slot.name) (pid \(slot.process!.pid))")
        } catch {
            throw ClusterError("cannot start \(slot.launch.executable): \(error)")
        }
    }

    private func exited(_ slot: Slot, _ exit: ChildProcess.Exit) {
        slot.process = nil
        if slot.leaving {
            logger.info("\(slot.name) \(exit) (scaled down)")
            return remove(slot)
        }
        guard !stopping else { return }
        guard started else {
            logger.error("\(slot.name) \(exit) before it registered")
            startup?.exitedEarly(slot.launch, exit)
            return
        }
        if clock.now - slot.startedAt > policy.stableAfter { slot.consecutiveExits = 0 }
        scheduleRestart(of: slot, because: "\(exit)")
    }

    /// Starts `slot` again after its back-off, unless its pool has restarted too often (then
    /// the pool is failed); a start that fails is scheduled again the same way.
    private func scheduleRestart(of slot: Slot, because reason: String) {
        guard let pool = pools[slot.launch.kind], pool.failure == nil else { return }
        let now = clock.now
        pool.restartTimes.removeAll { now - $0 > policy.window }
        if policy.isExceeded(by: pool.restartTimes + [now], now: now) {
            let failure = "\(pool.restartTimes.count + 1) restarts within \(policy.window) (the limit is "
                + "\(policy.intensity), limits.restarts); the last: \(slot.name) \(reason)"
            pool.failure = failure
            logger.error("the \(pool.kind) pool has failed: \(failure). It is left alone until `monarch scale \(pool.kind)=N`.")
            return
        }
        pool.restartTimes.append(now)
        slot.consecutiveExits += 1
        slot.restarts += 1
        let delay = policy.delay(afterConsecutiveExits: slot.consecutiveExits, jitter: Double.random(in: 0..<1))
        logger.warning("\(slot.name) \(reason); starting it again in \(delay.wholeMilliseconds) ms")
        let timer: LoopTimer
        do {
            timer = try LoopTimer(on: loop)
        } catch {
            // Not even a timer: the watchdog tries again.
            logger.error("cannot schedule the restart of \(slot.name): \(error)")
            return
        }
        slot.restartTimer = timer
        timer.start(afterMs: delay.wholeMilliseconds) { [unowned self, id = ObjectIdentifier(slot)] in
            CoordinatorActor.assumeIsolated {
                timer.close()
                guard let slot = self.slot(withID: id) else { return }
                slot.restartTimer = nil
                guard !stopping, !slot.leaving, slot.process == nil,
                    pools[slot.launch.kind]?.failure == nil
                else { return }
                do {
                    try launch(slot)
                } catch {
                    scheduleRestart(of: slot, because: "could not start (\(error))")
                }
            }
        }
    }

    /// Schedules a restart of every worker that is neither running nor waiting for one (its
    /// last restart could not even be scheduled).
    func restartMissing() {
        guard started, !stopping else { return }
        for pool in allPools where pool.failure == nil {
            for slot in pool.slots where slot.process == nil && slot.restartTimer == nil && !slot.leaving {
                scheduleRestart(of: slot, because: "is not running")
            }
        }
    }

    /// From now on every worker's exit is expected: none is restarted or taken for a crash.
    /// Called before the coordinator closes the workers' connections.
    func expectExits() {
        stopping = true
    }

    /// Stops every worker: waits up to `grace` for them to exit by themselves (they do once
    /// the coordinator closes their connections), then sends SIGTERM, then SIGKILL.
    func stopAll(grace: Duration) async {
        expectExits()
        watchdog?.close()
        watchdog = nil
        for pool in allPools {
            for slot in pool.slots {
                slot.restartTimer?.close()
                slot.restartTimer = nil
            }
        }
        for (signal, wait) in [(Int32(0), grace), (SIGTERM, Duration.seconds(2)), (SIGKILL, Duration.seconds(5))] {
            if signal != 0 {
                for pool in allPools { for slot in pool.slots { slot.process?.signal(signal) } }
            }
            // Real time, not ``clock``: this waits for processes to exit, with real sleeps.
            let start = ContinuousClock.now
            while ContinuousClock.now - start < wait {
                if !allPools.contains(where: { $0.slots.contains { $0.process != nil } }) { return }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}
