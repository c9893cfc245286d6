#if canImport(Glibc)
import Glibc
#endif
import Logging
import Monarch
import MonarchConfig
import MonarchLoop
import MonarchRouter
import MonarchWire

/// The coordinator: accepts clients and workers, routes each client request to its domain's
/// chain of worker pools, coalesces identical reads in flight, and answers every request
/// exactly once — with the first response, or one error listing what each provider did —
/// within its deadline. Loop thread only, except where noted.
public final class Coordinator: @unchecked Sendable {
    /// A worker that has registered.
    public struct WorkerInfo: Sendable, Equatable {
        /// The coordinator's id for it (`bundle-1`).
        public var id: String
        /// Its kind.
        public var kind: String
        /// Its process id, as it reported it.
        public var pid: Int?
    }

    /// The configuration the coordinator runs.
    public let configuration: Configuration
    /// The loop everything runs on.
    public let loop: EventLoop
    let logger: Logger
    private let router: Router<RouteOptions>
    /// Pools by kind; every kind any domain names has one, workers or not.
    let pools: [String: WorkerPool]
    /// Chains by domain name, in the configured order.
    private let chains: [String: [WorkerPool]]
    let flights: FlightTable
    private var listeners: [Listener] = []
    var clients: [ObjectIdentifier: ClientSession] = [:]
    var workerCount: [String: Int] = [:]
    var requestsInFlight = 0
    var draining = false
    private var drainWaiters: [CheckedContinuation<Void, Never>] = []

    /// Told about each worker that registers. Loop thread.
    public var onWorkerRegistered: ((WorkerInfo) -> Void)?
    /// Told about each registered worker whose connection ended. Loop thread.
    public var onWorkerLost: ((WorkerInfo) -> Void)?

    /// How long a connection may take to say hello before it is closed.
    static let helloTimeoutMs: UInt64 = 10_000

    /// A coordinator for `configuration`; nothing listens until ``start()``.
    ///
    /// - Throws: ``ConfigError`` when a route's pattern or upstream template is invalid.
    public init(configuration: Configuration, loop: EventLoop, logger: Logger) throws(ConfigError) {
        self.configuration = configuration
        self.loop = loop
        self.logger = logger
        self.router = try Router(routes: configuration.routes)
        var pools: [String: WorkerPool] = [:]
        for kind in configuration.domains.flatMap(\.providers) + configuration.workers.map(\.kind)
        where pools[kind] == nil {
            pools[kind] = CachePool.kinds.contains(kind)
                ? CachePool(kind: kind, loop: loop, logger: logger) : WorkerPool(kind: kind, loop: loop)
        }
        self.pools = pools
        self.chains = Dictionary(uniqueKeysWithValues: configuration.domains.map { domain in
            (domain.name, domain.providers.map { pools[$0]! })
        })
        self.flights = FlightTable(loop: loop)
    }

    /// The addresses clients connect to, as bound (a `tcp:…:0` shows the chosen port).
    public private(set) var clientAddresses: [SocketAddress] = []
    /// The address workers dial in to, as bound.
    public private(set) var workerAddress: SocketAddress?

    /// Listens on the configured client and worker addresses. Loop thread only.
    ///
    /// - Throws: ``UVError`` when an address cannot be bound; nothing is left listening then.
    public func start() throws(UVError) {
        loop.preconditionInEventLoop()
        do {
            for address in configuration.listen.clients {
                let listener = try listen(on: address, accepting: .client)
                clientAddresses.append(listener.boundAddress)
            }
            workerAddress = try listen(on: configuration.listen.workers, accepting: .worker).boundAddress
        } catch {
            for listener in listeners { listener.close() }
            listeners.removeAll()
            throw error
        }
    }

    private func listen(on address: SocketAddress, accepting role: Hello.Role) throws(UVError) -> Listener {
        if case .unix(let path) = address { Self.createParentDirectory(of: path) }
        // Listeners other machines can reach require the token (the configuration ensures there is one).
        let requiresToken = !Configuration.isLocal(address)
        let listener = try Listener(address: address, on: loop) { [unowned self] stream in
            greet(stream, as: role, requiresToken: requiresToken)
        }
        listeners.append(listener)
        return listener
    }

    private static func createParentDirectory(of path: String) {
        var directory = ""
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        for (index, part) in parts.enumerated() {
            directory += (index == 0 ? "" : "/") + part
            if !directory.isEmpty { mkdir(directory, 0o700) }
        }
    }

    /// The answer to one client request: a `response` or a `failure`, never anything else.
    func answer(_ message: RequestMessage) async -> WireMessage {
        loop.preconditionInEventLoop()
        guard !draining else {
            return failure(message.id, ChainError(.shuttingDown, "the coordinator is shutting down"))
        }
        requestsInFlight += 1
        defer {
            requestsInFlight -= 1
            if requestsInFlight == 0 { resumeDrainWaiters() }
        }
        let plan: RequestPlan
        do {
            plan = try RequestPlan(message, router: router, chains: chains, defaultTimeout: configuration.defaultTimeout)
        } catch {
            return failure(message.id, error)
        }
        let result = await flights.run(plan.request, along: plan.providers, key: plan.sharedKey, deadline: plan.deadline)
        switch result {
        case .success(let response): return .response(response.message(id: message.id))
        case .failure(let error): return failure(message.id, error)
        }
    }

    private func failure(_ id: MessageID, _ error: ChainError) -> WireMessage {
        .failure(FailureMessage(id: id, error: error.detail))
    }

    /// Stops taking connections and requests, then waits until the requests in flight are
    /// answered or `timeout` passes. Any task.
    public func drain(timeout: Duration) async {
        await withCheckedContinuation { continuation in
            loop.execute { [self] in
                draining = true
                for listener in listeners { listener.close() }
                listeners.removeAll()
                guard requestsInFlight > 0 else { return continuation.resume() }
                logger.info("draining \(requestsInFlight) request(s) in flight")
                drainWaiters.append(continuation)
                let timer = try? LoopTimer(on: loop)
                timer?.start(afterMs: timeout.wholeMilliseconds) { [self] in
                    timer?.close()
                    if requestsInFlight > 0 { logger.warning("\(requestsInFlight) request(s) still in flight after \(timeout)") }
                    resumeDrainWaiters()
                }
            }
        }
    }

    /// Ends every wait in ``drain(timeout:)`` now, requests in flight or not. Loop thread only.
    public func stopWaitingForDrain() {
        loop.preconditionInEventLoop()
        resumeDrainWaiters()
    }

    private func resumeDrainWaiters() {
        let waiters = drainWaiters
        drainWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    /// Closes every listener, and every client and worker connection once what is queued for it
    /// is written. Loop thread only.
    public func close() {
        draining = true
        for listener in listeners { listener.close() }
        listeners.removeAll()
        // Answers already queued still reach their clients before the close.
        for client in clients.values { client.connection.stream.closeAfterWrites() }
        for pool in pools.values {
            for worker in pool.workers { worker.connection.stream.closeAfterWrites() }
        }
    }
}
