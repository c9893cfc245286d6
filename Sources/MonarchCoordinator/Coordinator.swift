#if canImport(Glibc)
import Glibc
#endif
import Logging
import Monarch
import MonarchConfig
import MonarchLoop
import MonarchRouter
import MonarchWire
import Prometheus

/// The coordinator: accepts clients and workers, routes each client request to its domain's
/// chain of worker pools, coalesces identical reads in flight, and answers every request
/// exactly once — with the first response, or one error listing what each provider did —
/// within its deadline. Every table it keeps (connections, requests in flight, queues,
/// invalidations remembered, background work) is bounded by the configuration's ``Configuration/Limits``.
/// It runs on ``CoordinatorActor``, as do its sessions and tables: the compiler checks every
/// call into it.
@CoordinatorActor
public final class Coordinator: Sendable {
    /// A worker that has registered.
    public struct WorkerInfo: Sendable, Equatable {
        /// The coordinator's id for it (`bundle-1`).
        public var id: String
        /// Its kind.
        public var kind: String
        /// Its process id, as it reported it.
        public var pid: Int?
    }

    /// What is handed a client request's answer, once (see ``answer(_:host:for:arrived:done:)``).
    typealias AnswerHandler = @CoordinatorActor (ClientAnswer) -> Void

    /// The configuration the coordinator started with (what a reload may change is in
    /// ``routing``).
    public let configuration: Configuration
    /// The loop everything runs on: ``CoordinatorActor/loop``.
    public let loop: EventLoop
    let logger: Logger
    /// The bounds the coordinator keeps now.
    var limits: Configuration.Limits { routing.configuration.limits }
    /// The routes, domains and limits in force, replaced as a whole by ``reload(_:)``.
    var routing: Routing
    var router: Router<RouteOptions> { routing.router }
    /// Paths seen lately, parsed and routed.
    private var routes: RouteCache { routing.routeCache }
    /// Pools by kind; every kind any domain names has one, workers or not.
    let pools: [String: WorkerPool]
    /// The pools whose workers keep responses, by kind (their workers are in ``pools`` too).
    let cachePools: [CachePool]
    /// Chains by domain name, in the configured order.
    var chains: [String: [any RequestProvider]] { routing.chains }
    let flights: FlightTable
    /// The hits the coordinator answers itself (see ``HotTier``); nil when `limits.hotTier` is 0.
    let hotTier: HotTierCell?
    /// Everything that changes while the coordinator runs.
    var state: State

    /// Exchanges admitted from clients and not answered yet (waiting to start or running): at
    /// most ``Configuration/Limits/inFlight``.
    private(set) var requestsInFlight: Int {
        get { state.requestsInFlight }
        _modify { yield &state.requestsInFlight }
    }

    /// The addresses clients connect to, as bound (a `tcp:…:0` shows the chosen port).
    public private(set) var clientAddresses: [SocketAddress] {
        get { state.clientAddresses }
        _modify { yield &state.clientAddresses }
    }

    /// The address workers dial in to, as bound.
    public private(set) var workerAddress: SocketAddress? {
        get { state.workerAddress }
        _modify { yield &state.workerAddress }
    }

    /// Where metrics are served, as bound, when they are.
    public private(set) var metricsAddress: SocketAddress? {
        get { state.metricsAddress }
        _modify { yield &state.metricsAddress }
    }

    /// The client and worker listeners open now.
    private var listeners: [Listener] {
        get { state.listeners }
        _modify { yield &state.listeners }
    }

    /// Callers of ``drain(timeout:)`` waiting for the requests in flight to be answered.
    private var drainWaiters: [CheckedContinuation<Void, Never>] {
        get { state.drainWaiters }
        _modify { yield &state.drainWaiters }
    }

    /// Fires every second: idle connections, forgotten cancellations, old invalidations.
    private var maintenance: LoopTimer? {
        get { state.maintenance }
        _modify { yield &state.maintenance }
    }

    /// Fires every heartbeat: pings workers, and takes the silent ones out of rotation.
    private var heartbeat: LoopTimer? {
        get { state.heartbeat }
        _modify { yield &state.heartbeat }
    }

    /// The Prometheus endpoint, when `metrics` is configured.
    private var metricsEndpoint: MetricsEndpoint? {
        get { state.metricsEndpoint }
        _modify { yield &state.metricsEndpoint }
    }

    /// Knows each role by its secret.
    let roleGate: RoleGate
    /// Where the coordinator and everything it keeps read the time: deadlines, heartbeats,
    /// idle and stalled connections, rate limits, restart back-off, statistics.
    public let clock: MonotonicClock
    /// Where the hot tier reads the time its entries' ages and freshness are measured in:
    /// wall-clock time, as cache workers record their entries' store times. (HTTP `Date`
    /// headers and log lines read the system's wall clock.)
    public let wallClock: WallClock
    /// When the coordinator was made.
    let startedAt: ContinuousClock.Instant
    /// The keys the workers it starts prove their names with (see ``LocalWorkerKeys``).
    let localWorkerKeys = LocalWorkerKeys()
    /// This coordinator's identity in a shared cache store, random per process: its cache
    /// workers mark the changes they publish with it (in their `welcome`), and forward only
    /// other coordinators' changes.
    let origin: String = {
        var random = SystemRandomNumberGenerator()
        return String(random.next() as UInt64, radix: 16) + String(random.next() as UInt64, radix: 16)
    }()

    /// A coordinator for `configuration`, on ``CoordinatorActor/loop``, reading the time on
    /// `clock` and, for the hot tier, on `wallClock` (tests pass clocks they move by hand; its
    /// libuv timers still fire in real time, and what they decide is read on `clock`); nothing
    /// listens until ``start()``.
    ///
    /// - Throws: ``ConfigError`` when a route's pattern or upstream template is invalid.
    public init(
        configuration: Configuration, logger: Logger, clock: MonotonicClock = .system, wallClock: WallClock = .system
    ) throws(ConfigError) {
        let loop = CoordinatorActor.loop
        self.configuration = configuration
        self.loop = loop
        self.logger = logger
        self.clock = clock
        self.wallClock = wallClock
        self.startedAt = clock.now
        self.roleGate = RoleGate(configuration)
        let router = try Router<RouteOptions>(routes: configuration.routes)
        let hotTier = Self.makeHotTier(configuration: configuration)
        self.hotTier = hotTier
        var pools: [String: WorkerPool] = [:]
        var cachePools: [String: CachePool] = [:]
        for kind in configuration.domains.flatMap(\.providers) + configuration.workers.map(\.kind)
        where pools[kind] == nil {
            if PoolRole(workerKind: kind) == .cache {
                let cache = Self.makeCachePool(
                    kind: kind, configuration: configuration, logger: logger, clock: clock, wallClock: wallClock,
                    hotTier: hotTier)
                cachePools[kind] = cache
                pools[kind] = cache.pool
            } else {
                pools[kind] = WorkerPool(kind: kind, clock: clock)
            }
        }
        self.pools = pools
        self.cachePools = cachePools.keys.sorted().map { cachePools[$0]! }
        self.routing = Routing(configuration: configuration, router: router, pools: pools, cachePools: cachePools)
        self.flights = FlightTable(
            work: ChainWork(backgroundLimit: configuration.limits.backgroundTasks), clock: clock)
        self.state = State(
            statistics: RequestStatistics(metricsOn: configuration.metrics != nil, clock: clock),
            watches: WatchRegistry(perClient: configuration.limits.watchesPerClient),
            recentSharedChanges: RecentChanges(capacity: configuration.limits.sharedChanges),
            heartbeatJudge: HeartbeatJudge(interval: configuration.limits.heartbeat),
            handshakeSlots: HandshakeSlots(
                capacity: configuration.limits.handshakes, perPeer: configuration.limits.handshakesPerPeer, clock: clock),
            clock: clock)
        for pool in self.cachePools {
            pool.onStored = { [unowned self] key, tags, refreshed in notifyStored(key, tags: tags, refreshed: refreshed) }
        }
    }

    /// The pool for cache workers of `kind`, feeding `hotTier`, reading the time on `clock`
    /// (and on `wallClock` for the hot tier).
    nonisolated static func makeCachePool(
        kind: String, configuration: Configuration, logger: Logger, clock: MonotonicClock,
        wallClock: WallClock, hotTier: HotTierCell? = nil
    ) -> CachePool {
        // Invalidations matter for as long as a trip, and then its write-back, may run.
        return CachePool(
            kind: kind, logger: logger, clock: clock, wallClock: wallClock,
            invalidationMemory: configuration.longestRequestTimeout + .milliseconds(Int64(WorkerSession.exchangeTimeoutMs)),
            invalidationLimit: configuration.limits.invalidations, tagLimits: configuration.limits, hotTier: hotTier)
    }

    /// Listens on the configured client and worker addresses.
    ///
    /// - Throws: ``UVError`` when an address cannot be bound (or `listen.group` names no group
    ///   of the system); nothing is left listening then.
    public func start() throws(UVError) {
        do {
            let group = try socketGroup()
            for address in configuration.listen.clients {
                let listener = try listen(on: address, accepting: .client, group: group)
                clientAddresses.append(listener.boundAddress)
            }
            workerAddress = try listen(on: configuration.listen.workers, accepting: .worker, group: group).boundAddress
        } catch {
            for listener in listeners { listener.close() }
            listeners.removeAll()
            throw error
        }
        try startTimers()
        checkDescriptorBudget()
    }

    /// Starts the once-a-second maintenance and the heartbeats; ``start()`` does, after its
    /// listeners.
    func startTimers() throws(UVError) {
        let timer = try LoopTimer(on: loop)
        // Both fire in real time; what they decide is read on ``clock``.
        timer.start(afterMs: 1000, repeatMs: 1000) { [unowned self] in CoordinatorActor.assumeIsolated { maintain() } }
        maintenance = timer
        let beat = try LoopTimer(on: loop)
        let interval = max(limits.heartbeat.wholeMilliseconds, 1)
        beat.start(afterMs: interval, repeatMs: interval) { [unowned self] in CoordinatorActor.assumeIsolated { checkHeartbeats() } }
        heartbeat = beat
    }

    /// A connection to this coordinator from inside its process — an embedded client, or a
    /// worker running on a thread — with no listener or socket file: returns the descriptor of
    /// the caller's end, a connected Unix socket to open with
    /// ``MonarchLoop/StreamConnection/open(socket:on:)`` on any loop. The connection then goes
    /// through what every connection of `role` goes through: the caps, the hello, the token
    /// when one is configured.
    ///
    /// - Throws: ``UVError`` when the process has no descriptors left.
    public func connectInProcess(as role: Hello.Role) throws(UVError) -> Int32 {
        let (ours, theirs) = try StreamConnection.socketPair()
        let stream: StreamConnection
        do {
            stream = try StreamConnection.open(socket: ours, on: loop)
        } catch {
            Glibc.close(theirs)
            throw error
        }
        accept(stream, at: Door(takes: role, isUnixSocket: true, isLocal: true))
        return theirs
    }

    /// Serves the metrics of `registry` (where this process's swift-metrics go) on the
    /// configured `metrics` address, brought up to date at each scrape, and the admin pages
    /// beside them (``AdminPages``: `/livez`, `/readyz`, `/status`).
    ///
    /// - Throws: ``UVError`` when the address cannot be bound.
    public func startMetrics(registry: PrometheusCollectorRegistry) throws(UVError) {
        guard let address = configuration.metrics else { return }
        let sync = MetricsSync()
        let pages = AdminPages(
            metrics: { [unowned self] in
                await syncMetrics(sync)
                return registry.emitToBuffer()
            },
            unreadiness: { [unowned self] in await unreadiness() },
            status: { [unowned self] in await statusJSON() })
        let endpoint = MetricsEndpoint(address: address, secrets: metricsSecrets, logger: logger, pages: pages)
        try endpoint.start()
        metricsAddress = endpoint.boundAddress
        metricsEndpoint = endpoint
        logger.info("metrics at http://\(metricsAddress.map { "\($0)".replacingOccurrences(of: "tcp:", with: "") } ?? "?")/metrics")
    }

    /// The secrets a metrics scrape may present: the metrics and admin secrets, or, when
    /// neither is configured, the clients' (none at all: scrapes need none).
    var metricsSecrets: [String] {
        let secrets = [configuration.metricsToken, configuration.adminToken].compactMap { $0 }
        return secrets.isEmpty ? [configuration.token].compactMap { $0 } : secrets
    }

    /// Raises the descriptor limit, and warns when the connection caps could use more
    /// descriptors than the process may open (workers would then fail to connect or start).
    private func checkDescriptorBudget() {
        let available = ProcessSetup.raiseDescriptorLimit()
        // Listeners, the loop's own, log files, SQLite, child process pipes: a margin of 64.
        // Handshakes count in the client and worker caps.
        let needed = limits.clients + limits.workers + 64
        if needed > available {
            logger.warning("""
                limits.clients + limits.workers (\(needed - 64)) leave too few of the \
                \(available) descriptors this process may open; lower them or raise the limit (ulimit -n)
                """)
        }
    }

    /// The group id of `listen.group`, if configured.
    private func socketGroup() throws(UVError) -> gid_t? {
        guard let name = configuration.listen.group else { return nil }
        guard let entry = getgrnam(name) else {
            throw UVError(code: -ENOENT, operation: "find the group \"\(name)\" of listen.group")
        }
        return entry.pointee.gr_gid
    }

    private func listen(on address: SocketAddress, accepting role: Hello.Role, group: gid_t?) throws(UVError) -> Listener {
        if case .unix(let path) = address { Self.createParentDirectory(of: path) }
        // What a hello at this door must present is the role gate's to say (see ``RoleGate``).
        let isUnixSocket = if case .unix = address { true } else { false }
        let door = Door(takes: role, isUnixSocket: isUnixSocket, isLocal: Configuration.isLocal(address))
        let listener = try Listener(address: address, on: loop, socketGroup: group) { [unowned self] stream in
            CoordinatorActor.assumeIsolated { accept(stream, at: door) }
        }
        listeners.append(listener)
        return listener
    }

    /// Creates the folders above `path` that are missing, each readable by this user alone
    /// (`0700`); what exists is left as it is.
    package nonisolated static func createParentDirectory(of path: String) {
        var directory = ""
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        for (index, part) in parts.enumerated() {
            directory += (index == 0 ? "" : "/") + part
            if !directory.isEmpty { mkdir(directory, 0o700) }
        }
    }

    /// Admits one more exchange from a client, unless ``Configuration/Limits/inFlight`` are in
    /// flight already (it is then answered `overloaded`); an admitted one ends with
    /// ``exchangeFinished()``.
    func admitExchange() -> Bool {
        guard requestsInFlight < limits.inFlight else {
            overloadedRequests += 1
            return false
        }
        requestsInFlight += 1
        return true
    }

    /// How long `request` may take from its arrival, its wait for its turn on the client's
    /// connection included (the shorter of its `deadlineMs` and its route's timeout); nil when
    /// it would be refused before its trip.
    func deadline(of request: RequestMessage) -> Duration? {
        try? plan(request).deadline
    }

    /// `message`, requested for `host` (an HTTP request's; nil for the wire's), planned
    /// against this coordinator's routes, chains and limits (see ``RequestPlan``). Loop thread
    /// only.
    private func plan(_ message: RequestMessage, host: String? = nil) throws(ChainError) -> RequestPlan {
        try RequestPlan(message, host: host, router: router, chains: chains, limits: limits, routes: routes)
    }

    /// Ends an exchange admitted by ``admitExchange()``.
    func exchangeFinished() {
        requestsInFlight -= 1
        if requestsInFlight == 0 { resumeDrainWaiters() }
    }

    /// Answers one client request that arrived at `arrived` (on ``clock``; its deadline counts from then),
    /// for `host` when it is an HTTP request (its `Host`, normalized: ``RequestPlan``): calls
    /// `done` once, on the loop, with a `response` (of its own, or prepared for every
    /// request of a shared trip) or a `failure`, never anything else.
    /// A request that fails before its trip (the coordinator is draining, a bad path, no route,
    /// its deadline passed while it waited its turn), or that the hot tier answers, is answered
    /// before this returns nil;
    /// otherwise `done` comes later, and the number returned is the waiter that
    /// ``FlightTable/cancel(_:)`` answers `cancelled`. Every answer is counted in
    /// ``statistics``.
    func answer(
        _ message: RequestMessage, host: String? = nil, for client: Int, arrived: ContinuousClock.Instant,
        done: @escaping AnswerHandler
    ) -> Int? {
        func refuse(_ error: ChainError) -> Int? {
            answering(message.id, arrived: arrived, domain: "none", providers: [], done: done)(.failure(error), nil)
            return nil
        }
        guard !draining else { return refuse(ChainError(.shuttingDown, "the coordinator is shutting down")) }
        var plan: RequestPlan
        do {
            plan = try self.plan(message, host: host)
        } catch {
            return refuse(error)
        }
        // The time it waited for its turn on the client's connection counts.
        let waited = clock.now - arrived
        guard waited < plan.deadline else {
            answering(message.id, arrived: arrived, domain: plan.domain, providers: plan.providers, done: done)(
                .failure(ChainError(
                    .deadlineExceeded, "no answer within \(plan.deadline.wholeMilliseconds) ms (it waited its turn)")), nil)
            return nil
        }
        if answerFromHotTier(plan, id: message.id, arrived: arrived, done: done) { return nil }
        let finish = answering(message.id, arrived: arrived, domain: plan.domain, providers: plan.providers, done: done)
        plan.deadline -= waited
        plan.request.deadline = plan.request.deadline.map { $0 - waited }
        return flights.begin(
            plan.request, along: plan.providers, key: plan.sharedKey, deadline: plan.deadline, client: client, done: finish)
    }

    /// What hands request `id`'s result (with its response `prepared` for a shared trip) to
    /// `done`, counted in ``statistics``: a response is a cache hit when one of the cache pools
    /// among `providers` answered it.
    private func answering(
        _ id: MessageID, arrived: ContinuousClock.Instant, domain: String, providers: [any RequestProvider],
        done: @escaping AnswerHandler
    ) -> FlightTable.Done {
        let hasCache = providers.contains { $0 is CachePool }
        let clock = clock
        return { [unowned self] result, prepared in
            switch result {
            case .success(let response):
                // The name first: a cheaper test than the cast.
                let hit = hasCache && providers.contains { $0.name == response.source && $0 is CachePool }
                statistics.record(
                    domain: domain, source: response.source, status: response.status, failureCode: nil,
                    latency: clock.now - arrived, cacheHit: hasCache ? hit : nil)
                if let prepared {
                    done(.prepared(prepared, id: id, ageMs: nil))
                } else {
                    done(.message(.response(response.message(id: id))))
                }
            case .failure(let error):
                statistics.record(
                    domain: domain, source: nil, status: nil, failureCode: error.code.rawValue, latency: clock.now - arrived,
                    cacheHit: hasCache ? false : nil)
                done(.message(failure(id, error)))
            }
        }
    }

    private func failure(_ id: MessageID, _ error: ChainError) -> WireMessage {
        .failure(FailureMessage(id: id, error: error.detail))
    }

    /// Once a second: closes idle clients, forgets what workers never answered after a cancel,
    /// and forgets invalidations no trip under way can need.
    private func maintain() {
        let now = clock.now
        let timeout = limits.idleTimeout
        for client in clients.values {
            // A stall is looked for (and tracked) only in a client that is not idle.
            client.expireWaiting(now: now)
            let idle = client.isIdle(now: now, timeout: timeout)
            let stalled = !idle && client.isStalled(now: now, timeout: timeout)
            if idle {
                idleClientsClosed += 1
                logger.debug("closing client \(client.id): nothing received for \(limits.idleTimeout) and nothing in flight")
                // Not after its writes: a client silent this long may never read them.
                client.connection.close()
            } else if stalled {
                slowReadersClosed += 1
                peerLog.log(
                    .warning, "closing client \(client.id): it took none of its answers for \(limits.idleTimeout)", to: logger)
                client.connection.close()
            }
        }
        for pool in pools.values {
            for worker in pool.workers { worker.forgetUnansweredCancellations(now: now) }
        }
        for pool in cachePools { pool.forgetOldInvalidations(now: now) }
    }

    /// Stops taking connections and requests, then waits until the requests in flight are
    /// answered and the background work (write-backs, refreshes) is done, or `timeout` passes
    /// (background work still running then is cancelled). Any task.
    public func drain(timeout: Duration) async {
        let started = clock.now
        draining = true
        for listener in listeners { listener.close() }
        listeners.removeAll()
        if requestsInFlight > 0, !drainCutShort {
            logger.info("draining \(requestsInFlight) request(s) in flight")
            await withCheckedContinuation { continuation in
                // Checked again where the wait begins: the last answer may have gone meanwhile.
                guard requestsInFlight > 0, !drainCutShort else { return continuation.resume() }
                drainWaiters.append(continuation)
                let timer = try? LoopTimer(on: loop)
                timer?.start(afterMs: timeout.wholeMilliseconds) { [self] in
                    timer?.close()
                    CoordinatorActor.assumeIsolated {
                        if requestsInFlight > 0 { logger.warning("\(requestsInFlight) request(s) still in flight after \(timeout)") }
                        resumeDrainWaiters()
                    }
                }
            }
        }
        let left = max(.milliseconds(100), timeout - (clock.now - started))
        await flights.work.background.drain(timeout: left)
    }

    /// Ends every wait in ``drain(timeout:)`` now, or as soon as it begins, requests in flight
    /// or not, and cancels the background work (write-backs, refreshes) rather than waiting for
    /// it.
    public func stopWaitingForDrain() {
        drainCutShort = true
        flights.work.background.stopWaiting()
        resumeDrainWaiters()
    }

    private func resumeDrainWaiters() {
        let waiters = drainWaiters
        drainWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    /// Closes every listener, and every client and worker connection once what is queued for it
    /// is written.
    public func close() {
        draining = true
        maintenance?.close()
        maintenance = nil
        heartbeat?.close()
        heartbeat = nil
        metricsEndpoint?.close()
        metricsEndpoint = nil
        flights.closeSpareTimers()
        for listener in listeners { listener.close() }
        listeners.removeAll()
        // Answers already queued still reach their clients before the close.
        for client in clients.values { client.connection.closeAfterWrites() }
        for pool in pools.values {
            for worker in pool.workers { worker.connection.closeAfterWrites() }
        }
    }
}
