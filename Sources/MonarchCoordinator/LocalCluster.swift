#if canImport(Glibc)
import Glibc
#endif
import Logging
import MonarchConfig
import MonarchLoop
import Metrics
import MonarchWire
import Prometheus
import Synchronization

/// A whole cluster in the foreground (`monarch up`): the coordinator, and the workers the
/// configuration asks for as child processes.
///
/// Prints a line containing `ready` once every configured worker has registered. The first
/// SIGINT or SIGTERM drains: no new requests, the requests in flight are answered (within the
/// default deadline), then every worker is stopped; a second signal stops at once. Workers exit
/// by themselves when the coordinator's connection closes, so even a coordinator killed with
/// SIGKILL leaves no worker behind.
public final class LocalCluster: Sendable {
    private enum Stop: Sendable {
        /// SIGINT or SIGTERM: the first drains, a second stops at once.
        case signal
        case failed(ClusterError)
    }

    /// The configuration the cluster runs.
    public let configuration: Configuration
    /// Where the worker executables are (`monarch-bundle-worker`, …).
    public let executableDirectory: String
    private let logger: Logger
    private let announce: @Sendable (String) -> Void
    private let reread: (@Sendable () throws -> Configuration)?
    private let notifier: ServiceNotifier
    /// The HTTP listeners, once started (`listen.http`).
    private let frontDoor = Mutex<HTTPFrontDoor?>(nil)

    /// A cluster for `configuration` whose workers start from `executableDirectory`;
    /// `announce` prints the ready line (stdout by default). `reread` reads the configuration
    /// again for a reload on SIGHUP (nil: SIGHUP is ignored). A service manager named by
    /// `NOTIFY_SOCKET` in `environment` hears of readiness, reloads and the stop
    /// (``ServiceNotifier``).
    public init(
        configuration: Configuration, executableDirectory: String, logger: Logger,
        reread: (@Sendable () throws -> Configuration)? = nil, environment: [String: String] = [:],
        announce: @escaping @Sendable (String) -> Void = { line in
            print(line)
            fflush(nil)
        }
    ) {
        self.configuration = configuration
        self.executableDirectory = executableDirectory
        self.logger = logger
        self.reread = reread
        self.notifier = ServiceNotifier(environment: environment)
        self.announce = announce
    }

    /// Runs the cluster until a signal stops it (returns) or it cannot run (throws). Once per
    /// process: on its way out it stops ``CoordinatorActor/loop``, closing whatever was left open.
    ///
    /// - Throws: ``ClusterError`` when an address cannot be bound, a worker cannot be started
    ///   or exits before registering, or the configuration's routes are invalid.
    public func run() async throws(ClusterError) {
        let loop = CoordinatorActor.loop
        defer { _ = loop.shutdown() }
        let (stops, stop) = AsyncStream<Stop>.makeStream()
        let (coordinator, supervisor, signals) = try await start(on: loop, stop: stop)

        var reason: Stop = .signal
        var impatient = false
        for await next in stops {
            reason = next
            break
        }
        let door = frontDoor.withLock { $0 }
        switch reason {
        case .signal:
            notifier.stopping()
            logger.info("stopping: answering the requests in flight (second signal stops at once)")
            // No new HTTP connections while draining (those open are answered 503 and closed).
            await door?.stopListening()
            // A second signal ends the wait for the drain, and the workers' grace.
            let impatience = Task { () -> Bool in
                for await next in stops {
                    if case .signal = next {
                        await coordinator.stopWaitingForDrain()
                        return true
                    }
                }
                return false
            }
            // The timeout in force: a reload may have changed it.
            let timeout = await coordinator.limits.timeout
            await coordinator.drain(timeout: timeout)
            impatience.cancel()
            impatient = await impatience.value
        case .failed:
            impatient = true
        }
        // Workers exit once their connections close: tell the supervisor first, so it does not
        // take that for a crash.
        await supervisor.expectExits()
        await door?.close()
        await coordinator.close()
        await supervisor.stopAll(grace: impatient ? .zero : .seconds(5))
        try? await loop.submit { for signal in signals { signal.close() } }
        stop.finish()
        if case .failed(let error) = reason { throw error }
        logger.info("stopped")
    }

    /// Prints the ready line and tells the service manager.
    private func ready(_ line: String) {
        announce(line)
        notifier.ready(status: line)
    }

    /// Reads the configuration again and applies it (``Coordinator/reload(_:)``); one that does
    /// not load, would not run here or cannot be applied changes nothing and is logged.
    @CoordinatorActor
    private func reload(
        _ coordinator: Coordinator, reading reread: () throws -> Configuration, ready readyLine: String, started: Bool
    ) {
        // Before every worker has registered, the service manager has not heard READY yet:
        // a reload then must not say it.
        if started { notifier.reloading() }
        defer { if started { notifier.ready(status: readyLine) } }
        logger.notice("SIGHUP: reading the configuration again")
        let file: Configuration
        do {
            file = try reread()
        } catch {
            logger.error("reload refused, nothing changed: \(error)")
            return
        }
        let problems = ConfigurationCheck.problems(in: file, executableDirectory: executableDirectory)
        guard problems.isEmpty else {
            logger.error("reload refused, nothing changed: \(problems.joined(separator: "; "))")
            return
        }
        do {
            try coordinator.reload(file)
        } catch {
            logger.error("reload refused, nothing changed: \(error)")
        }
    }

    /// Sends this process's swift-metrics to a Prometheus registry, which it returns. Once per
    /// process (swift-metrics allows one bootstrap).
    private static func bootstrapMetrics() -> PrometheusCollectorRegistry {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30),
        ]
        MetricsSystem.bootstrap(factory)
        return registry
    }

    /// Listens, watches the signals, starts the workers. A failure to start a worker is
    /// yielded to `stop` (``run()`` then stops what did start); any other failure closes what
    /// was opened and is thrown.
    private func start(
        on loop: EventLoop, stop: AsyncStream<Stop>.Continuation
    ) async throws(ClusterError) -> (Coordinator, Supervisor, [LoopSignal]) {
        let (coordinator, supervisor, clientAddresses) = try await openCoordinator(on: loop)
        let door = configuration.listen.http.isEmpty ? nil : await HTTPFrontDoor(coordinator: coordinator, logger: logger)
        if let door {
            do {
                try await door.start()
            } catch {
                await door.close()
                await coordinator.close()
                throw ClusterError("\(error)")
            }
            frontDoor.withLock { $0 = door }
        }
        let httpAddresses = await door?.boundAddresses ?? []
        let readyLine = "monarch: ready — clients on \(clientAddresses.map(\.description).joined(separator: ", "))"
            + (httpAddresses.isEmpty ? "" : "; http on " + httpAddresses.map(\.description).joined(separator: ", "))
            + "; workers: " + (configuration.workers.map { "\($0.kind)×\($0.count)" }.joined(separator: ", "))
        let signals: [LoopSignal]
        do throws(ClusterError) {
            signals = try await watchSignals(
                on: loop, stop: stop, coordinator: coordinator, supervisor: supervisor, ready: readyLine)
        } catch {
            await door?.close()
            await coordinator.close()
            throw error
        }
        // At most this many local workers start at once, not yet registered (as a scale's do):
        // more would overflow the handshake slots and be turned away.
        let limits = configuration.limits
        let startsAtOnce = ScalePlan.startBound(workerStarts: limits.workerStarts, handshakes: limits.handshakes)
        do throws(ClusterError) {
            try await supervisor.startUp(
                atOnce: startsAtOnce, ready: { [self] in ready(readyLine) }, failed: { stop.yield(.failed($0)) },
                exitedEarly: { launch, exit in
                    stop.yield(.failed(ClusterError("the \(launch.kind) worker \(launch.name) \(exit) before it registered")))
                })
        } catch {
            // Some workers may have started: `run` stops them, closes the signals and the
            // coordinator as at any stop, then throws this, so no process or handle is left.
            stop.yield(.failed(error))
        }
        return (coordinator, supervisor, signals)
    }

    /// The coordinator listening (and serving metrics when configured), with its supervisor,
    /// which starts no worker yet, and the addresses clients reach it on. On a failure nothing
    /// is left open.
    @CoordinatorActor
    private func openCoordinator(
        on loop: EventLoop
    ) throws(ClusterError) -> (Coordinator, Supervisor, clientAddresses: [SocketAddress]) {
        let registry = configuration.metrics.map { _ in Self.bootstrapMetrics() }
        let coordinator: Coordinator
        do {
            coordinator = try Coordinator(configuration: configuration, logger: logger)
        } catch {
            throw ClusterError("invalid configuration: \(error)")
        }
        do {
            try coordinator.start()
            if let registry { try coordinator.startMetrics(registry: registry) }
        } catch {
            // What did start (a listener, the timers) is closed before the loop shuts down.
            coordinator.close()
            throw ClusterError("cannot listen: \(error)")
        }
        let executableDirectory = self.executableDirectory
        let logLevel = logger.logLevel.rawValue
        let workerAddress = coordinator.workerAddress!
        // Workers inherit the environment less its secrets (a cache worker's Redis password
        // reaches it there, never on a command line): see ``WorkerEnvironment``.
        let limits = configuration.limits
        let supervisor = Supervisor(
            configuration: configuration, policy: RestartPolicy(intensity: limits.restarts, window: limits.restartWindow),
            environment: nil, workerKeys: coordinator.localWorkerKeys, logger: logger, clock: coordinator.clock
        ) { pool, ordinal in
            WorkerLaunch.launch(
                for: pool, ordinal: ordinal, coordinator: workerAddress, executableDirectory: executableDirectory,
                logLevel: logLevel)
        }
        coordinator.supervisor = supervisor
        coordinator.onWorkerRegistered = { info in supervisor.startupWorkerRegistered(info.id) }
        return (coordinator, supervisor, coordinator.clientAddresses)
    }

    /// SIGINT and SIGTERM stop the cluster; SIGHUP reloads the configuration when it can be
    /// read again. On a failure no signal is left watched.
    @CoordinatorActor
    private func watchSignals(
        on loop: EventLoop, stop: AsyncStream<Stop>.Continuation, coordinator: Coordinator, supervisor: Supervisor,
        ready readyLine: String
    ) throws(ClusterError) -> [LoopSignal] {
        var signals: [LoopSignal] = []
        do {
            for number in [SIGINT, SIGTERM] {
                signals.append(try LoopSignal(number, on: loop) { stop.yield(.signal) })
            }
            if let reread {
                // A libuv callback, on the loop thread.
                signals.append(try LoopSignal(SIGHUP, on: loop) { [self] in
                    CoordinatorActor.assumeIsolated {
                        reload(coordinator, reading: reread, ready: readyLine, started: supervisor.started)
                    }
                })
            }
        } catch {
            for signal in signals { signal.close() }
            throw ClusterError("cannot watch signals: \(error)")
        }
        return signals
    }
}
