#if canImport(Glibc)
import Glibc
#endif
import Logging
import MonarchLoop

/// Starts the local worker processes and keeps them running: a worker that exits after the
/// cluster was ready is started again after a back-off (1 s, doubling up to 30 s, reset once it
/// has run for a minute), and so is one whose start fails (no descriptors, no memory, a missing
/// executable): a failed start is never the end of a worker. Workers run in sessions of their
/// own, so a terminal's Ctrl-C reaches only `monarch up`, which drains before it stops them.
/// Loop thread only.
final class Supervisor: @unchecked Sendable {
    private final class Slot {
        let launch: WorkerLaunch
        var process: ChildProcess?
        var restarts = 0
        var startedAt = ContinuousClock.now
        /// Whether a restart is scheduled.
        var restartPending = false
        init(launch: WorkerLaunch) { self.launch = launch }
    }

    let loop: EventLoop
    private let logger: Logger
    private let environment: [String: String]?
    private var slots: [Slot]
    /// Whether the workers are being stopped: exits are then expected, not restarted.
    var stopping = false
    /// Told when a worker exits while the cluster is still starting (its launch failed). Loop thread.
    var onStartupExit: ((WorkerLaunch, ChildProcess.Exit) -> Void)?
    /// Whether every worker has registered once; before that an exit is a failed start.
    var started = false
    /// Looks every few seconds for workers that are neither running nor due to restart.
    private var watchdog: LoopTimer?

    init(launches: [WorkerLaunch], environment: [String: String]?, loop: EventLoop, logger: Logger) {
        self.slots = launches.map(Slot.init)
        self.environment = environment
        self.loop = loop
        self.logger = logger
    }

    /// Starts every worker.
    ///
    /// - Throws: ``ClusterError`` when an executable is missing or cannot be started.
    func launchAll() throws(ClusterError) {
        for slot in slots {
            guard access(slot.launch.executable, X_OK) == 0 else {
                throw ClusterError(
                    "cannot start the \(slot.launch.kind) worker: \(slot.launch.executable) is missing or not executable")
            }
        }
        for slot in slots { try launch(slot) }
        if let timer = try? LoopTimer(on: loop) {
            timer.start(afterMs: 5000, repeatMs: 5000) { [unowned self] in restartMissing() }
            watchdog = timer
        }
    }

    /// The process ids of the running workers, by worker name.
    var pids: [String: Int32] {
        Dictionary(uniqueKeysWithValues: slots.compactMap { slot in slot.process.map { (slot.launch.name, $0.pid) } })
    }

    private func launch(_ slot: Slot) throws(ClusterError) {
        do {
            slot.startedAt = .now
            slot.process = try ChildProcess(
                executable: slot.launch.executable, arguments: slot.launch.arguments, environment: environment,
                newSession: true, on: loop
            ) { [unowned self, unowned slot] exit in exited(slot, exit) }
            logger.debug("started \(slot.launch.name) (pid \(slot.process!.pid))")
        } catch {
            throw ClusterError("cannot start \(slot.launch.executable): \(error)")
        }
    }

    private func exited(_ slot: Slot, _ exit: ChildProcess.Exit) {
        slot.process = nil
        guard !stopping else { return }
        guard started else {
            logger.error("\(slot.launch.name) \(exit) before it registered")
            onStartupExit?(slot.launch, exit)
            return
        }
        if ContinuousClock.now - slot.startedAt > .seconds(60) { slot.restarts = 0 }
        scheduleRestart(of: slot, because: "\(exit)")
    }

    /// Starts `slot` again after its back-off; a start that fails is scheduled again the same way.
    private func scheduleRestart(of slot: Slot, because reason: String) {
        let delay = min(1000 << min(slot.restarts, 5), 30_000)
        slot.restarts += 1
        slot.restartPending = true
        logger.warning("\(slot.launch.name) \(reason); starting it again in \(delay) ms")
        let timer: LoopTimer
        do {
            timer = try LoopTimer(on: loop)
        } catch {
            // Not even a timer: the next exit or restart check tries again.
            slot.restartPending = false
            logger.error("cannot schedule the restart of \(slot.launch.name): \(error)")
            return
        }
        timer.start(afterMs: UInt64(delay)) { [unowned self] in
            timer.close()
            slot.restartPending = false
            guard !stopping, slot.process == nil else { return }
            do {
                try launch(slot)
            } catch {
                scheduleRestart(of: slot, because: "could not start (\(error))")
            }
        }
    }

    /// Schedules a restart of every worker that is neither running nor waiting for one (its
    /// last restart could not even be scheduled). Loop thread only.
    func restartMissing() {
        guard started, !stopping else { return }
        for slot in slots where slot.process == nil && !slot.restartPending {
            scheduleRestart(of: slot, because: "is not running")
        }
    }

    /// Stops every worker: waits up to `grace` for them to exit by themselves (they do once
    /// the coordinator closes their connections), then sends SIGTERM, then SIGKILL. Any task.
    func stopAll(grace: Duration) async {
        try? await loop.submit { [self] in
            stopping = true
            watchdog?.close()
            watchdog = nil
        }
        for (signal, wait) in [(Int32(0), grace), (SIGTERM, Duration.seconds(2)), (SIGKILL, Duration.seconds(5))] {
            if signal != 0 {
                loop.execute { [self] in
                    for slot in slots { slot.process?.signal(signal) }
                }
            }
            let start = ContinuousClock.now
            while ContinuousClock.now - start < wait {
                let running = (try? await loop.submit { [self] in slots.contains { $0.process != nil } }) ?? false
                if !running { return }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}
