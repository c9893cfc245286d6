import Logging
import Monarch
import MonarchConfig
import MonarchLoop
import MonarchTransport
import MonarchWire

extension Coordinator {
    /// What changes while the coordinator runs: its connections, counters, timers and
    /// registries, in the coordinator's isolation (``CoordinatorActor``).
    struct State {
        var listeners: [Listener] = []
        var clients: [Int: ClientSession] = [:]
        var nextClient: Int = 1
        var handshakes: [Hello.Role: Int] = [:]
        var handshakeSlots: HandshakeSlots<Int>
        var nextHandshake: Int = 1
        var awaitingHello: [Int: FrameConnection] = [:]
        var clientsByPeer: [String: Int] = [:]
        var adminSessions: Int = 0
        var unauthorizedHellos: Int = 0
        var forbiddenRequests: Int = 0
        var workerCount: [String: Int] = [:]
        var connectedWorkerNames: [String: Set<String>] = [:]
        var workerConnections: Int = 0
        var requestsInFlight: Int = 0
        var overloadedRequests: Int = 0
        var refusedConnections: Int = 0
        var slowReadersClosed: Int = 0
        var idleClientsClosed: Int = 0
        var unresponsiveWorkers: Int = 0
        var heartbeatJudge: HeartbeatJudge
        /// The CPU progress of each local worker at the last two beats, by worker id.
        var workerProgress: [String: (previous: ProcessProgress?, latest: ProcessProgress)] = [:]
        var scalingKinds: Set<String> = []
        var draining: Bool = false
        var drainCutShort: Bool = false
        var drainWaiters: [CheckedContinuation<Void, Never>] = []
        var statistics: RequestStatistics
        var maintenance: LoopTimer?
        var heartbeat: LoopTimer?
        var metricsEndpoint: MetricsEndpoint?
        var supervisor: Supervisor?
        var peerLog: LogLimiter
        var adminLog: LogLimiter
        var watches: WatchRegistry
        var watchEventsSent: Int = 0
        var watchEventsDropped: Int = 0
        var watchFanout = WatchFanout()
        var recentSharedChanges: RecentChanges
        var sharedChangesHeard: Int = 0
        var onWorkerRegistered: (@CoordinatorActor (WorkerInfo) -> Void)?
        var onWorkerLost: (@CoordinatorActor (WorkerInfo) -> Void)?
        var clientAddresses: [SocketAddress] = []
        var workerAddress: SocketAddress?
        var metricsAddress: SocketAddress?

        init(
            statistics: RequestStatistics, watches: WatchRegistry, recentSharedChanges: RecentChanges,
            heartbeatJudge: HeartbeatJudge, handshakeSlots: HandshakeSlots<Int>, clock: MonotonicClock
        ) {
            self.peerLog = LogLimiter(clock: clock)
            self.adminLog = LogLimiter(clock: clock)
            self.handshakeSlots = handshakeSlots
            self.statistics = statistics
            self.heartbeatJudge = heartbeatJudge
            self.watches = watches
            self.recentSharedChanges = recentSharedChanges
        }
    }

    var clients: [Int: ClientSession] {
        get { state.clients }
        _modify { yield &state.clients }
    }

    /// The serial number of the next client session.
    var nextClient: Int {
        get { state.nextClient }
        _modify { yield &state.nextClient }
    }

    /// Connections accepted that have not had their hello accepted yet, by the role their
    /// listener takes.
    var handshakes: [Hello.Role: Int] {
        get { state.handshakes }
        _modify { yield &state.handshakes }
    }

    /// The handshake slots of connections that have not said hello, by door class and peer.
    var handshakeSlots: HandshakeSlots<Int> {
        get { state.handshakeSlots }
        _modify { yield &state.handshakeSlots }
    }

    /// The ticket of the next connection to take a handshake slot.
    var nextHandshake: Int {
        get { state.nextHandshake }
        _modify { yield &state.nextHandshake }
    }

    /// The connections holding a handshake slot, by ticket (to close one pushed out).
    var awaitingHello: [Int: FrameConnection] {
        get { state.awaitingHello }
        _modify { yield &state.awaitingHello }
    }

    /// Client connections open (handshakes included), by TCP peer address.
    var clientsByPeer: [String: Int] {
        get { state.clientsByPeer }
        _modify { yield &state.clientsByPeer }
    }

    /// Client sessions whose hello proved them admins.
    var adminSessions: Int {
        get { state.adminSessions }
        _modify { yield &state.adminSessions }
    }

    /// Hellos refused for the secret they presented (or did not).
    var unauthorizedHellos: Int {
        get { state.unauthorizedHellos }
        _modify { yield &state.unauthorizedHellos }
    }

    /// Requests refused `forbidden`: admin commands from clients.
    var forbiddenRequests: Int {
        get { state.forbiddenRequests }
        _modify { yield &state.forbiddenRequests }
    }

    /// Workers registered (connected or not), by kind: the numbers of their ids.
    var workerCount: [String: Int] {
        get { state.workerCount }
        _modify { yield &state.workerCount }
    }

    /// The connected workers' names, by kind: a second worker with a connected one's name is refused.
    var connectedWorkerNames: [String: Set<String>] {
        get { state.connectedWorkerNames }
        _modify { yield &state.connectedWorkerNames }
    }

    /// Worker connections, handshakes on the worker listener included.
    var workerConnections: Int {
        get { state.workerConnections }
        _modify { yield &state.workerConnections }
    }

    /// Requests answered `overloaded` because ``Configuration/Limits/inFlight`` were in flight,
    /// or because their client left more than ``Configuration/Limits/clientQueueBytes`` of
    /// answers unread.
    var overloadedRequests: Int {
        get { state.overloadedRequests }
        _modify { yield &state.overloadedRequests }
    }

    /// Connections closed at once because a cap was reached.
    var refusedConnections: Int {
        get { state.refusedConnections }
        _modify { yield &state.refusedConnections }
    }

    /// Client connections closed because they did not read their answers.
    var slowReadersClosed: Int {
        get { state.slowReadersClosed }
        _modify { yield &state.slowReadersClosed }
    }

    /// Client connections closed after ``Configuration/Limits/idleTimeout`` of silence.
    var idleClientsClosed: Int {
        get { state.idleClientsClosed }
        _modify { yield &state.idleClientsClosed }
    }

    /// Workers taken out of rotation for missing two heartbeats.
    var unresponsiveWorkers: Int {
        get { state.unresponsiveWorkers }
        _modify { yield &state.unresponsiveWorkers }
    }

    /// What decides, beat by beat, which workers have been silent too long.
    var heartbeatJudge: HeartbeatJudge {
        get { state.heartbeatJudge }
        _modify { yield &state.heartbeatJudge }
    }

    /// The kinds a `scale` is under way for.
    var scalingKinds: Set<String> {
        get { state.scalingKinds }
        _modify { yield &state.scalingKinds }
    }

    var draining: Bool {
        get { state.draining }
        _modify { yield &state.draining }
    }

    /// Whether a second signal cut the drain short (see ``stopWaitingForDrain()``).
    var drainCutShort: Bool {
        get { state.drainCutShort }
        _modify { yield &state.drainCutShort }
    }

    /// What the requests came to: totals, and the last minute per domain.
    var statistics: RequestStatistics {
        get { state.statistics }
        _modify { yield &state.statistics }
    }

    /// The local workers' supervisor, when the coordinator runs in `monarch up`: it starts and
    /// stops workers for `scale`, and kills the unresponsive ones.
    var supervisor: Supervisor? {
        get { state.supervisor }
        _modify { yield &state.supervisor }
    }

    /// Log lines about peers (refusals, protocol errors), kept to a few per interval.
    var peerLog: LogLimiter {
        get { state.peerLog }
        _modify { yield &state.peerLog }
    }

    /// Log lines about admin exchanges clients may send at will (invalidations), likewise.
    var adminLog: LogLimiter {
        get { state.adminLog }
        _modify { yield &state.adminLog }
    }

    /// Every client's watches (`watch` messages), at most `limits.watchesPerClient` each.
    var watches: WatchRegistry {
        get { state.watches }
        _modify { yield &state.watches }
    }

    /// `changed` events sent to watchers, and dropped for watchers that did not read.
    var watchEventsSent: Int {
        get { state.watchEventsSent }
        _modify { yield &state.watchEventsSent }
    }

    var watchEventsDropped: Int {
        get { state.watchEventsDropped }
        _modify { yield &state.watchEventsDropped }
    }

    /// The ids of the shared-store changes the watchers were told of lately.
    var recentSharedChanges: RecentChanges {
        get { state.recentSharedChanges }
        _modify { yield &state.recentSharedChanges }
    }

    /// Changes other coordinators made to the shared store that the watchers were told of
    /// (each once, however many workers forwarded it).
    var sharedChangesHeard: Int {
        get { state.sharedChangesHeard }
        _modify { yield &state.sharedChangesHeard }
    }

    /// Told about each worker that registers.
    public var onWorkerRegistered: (@CoordinatorActor (WorkerInfo) -> Void)? {
        get { state.onWorkerRegistered }
        set { state.onWorkerRegistered = newValue }
    }

    /// Told about each registered worker whose connection ended.
    public var onWorkerLost: (@CoordinatorActor (WorkerInfo) -> Void)? {
        get { state.onWorkerLost }
        set { state.onWorkerLost = newValue }
    }
}
