import MonarchLoop

// The start of `monarch up`: the workers the configuration asks for, launched a few at a time
// as the earlier ones register.
extension Supervisor {
    /// What a start waits for, and whom it tells.
    struct Startup {
        /// The workers launched at start, by name.
        var expected: Set<String>
        /// Those of them that have registered.
        var registered: Set<String> = []
        /// Told once every one has registered.
        var ready: @Sendable () -> Void
        /// Told when a waiting worker cannot be started.
        var failed: @Sendable (ClusterError) -> Void
        /// Told when a worker exits before it registered (its launch failed).
        var exitedEarly: @Sendable (WorkerLaunch, ChildProcess.Exit) -> Void
    }

    /// Launches the workers the configuration asks for, at most `atOnce` of them started and
    /// not yet registered: each that registers (``startupWorkerRegistered(_:)``) lets the next
    /// one start. `ready` is told once every one has registered (at once when there are none);
    /// `failed`, when a waiting worker cannot be started; `exitedEarly`, when a worker exits
    /// before every one has registered.
    ///
    /// - Throws: ``ClusterError`` when an executable is missing or a first worker cannot be
    ///   started.
    func startUp(
        atOnce: Int, ready: @escaping @Sendable () -> Void, failed: @escaping @Sendable (ClusterError) -> Void,
        exitedEarly: @escaping @Sendable (WorkerLaunch, ChildProcess.Exit) -> Void
    ) throws(ClusterError) {
        let expected = Set(initialLaunches.map(\.name))
        startup = Startup(expected: expected, ready: ready, failed: failed, exitedEarly: exitedEarly)
        try launchAll(atOnce: atOnce)
        if expected.isEmpty { finishStartup() }
    }

    /// A worker registered with the coordinator: one of the start's makes room for the next
    /// one waiting, and the last of them ends the start.
    func startupWorkerRegistered(_ name: String) {
        guard var run = startup, run.expected.contains(name), !run.registered.contains(name) else { return }
        run.registered.insert(name)
        startup = run
        do {
            try launchWaiting(upTo: 1)
        } catch {
            run.failed(error)
        }
        if run.expected.isSubset(of: run.registered) { finishStartup() }
    }

    private func finishStartup() {
        guard let run = startup else { return }
        startup = nil
        started = true
        run.ready()
    }
}
