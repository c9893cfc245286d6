import Logging
import Monarch
import MonarchConfig
import MonarchLoop
import MonarchTransport
import MonarchWire

extension Coordinator {
    /// What changes while the coordinator runs: its connections, counters, timers and
    /// registries. It lives in a ``MonarchLoop/LoopBound``: touched on the loop's thread only,
    /// which every access checks.
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
        var onWorkerRegistered: (@Sendable (WorkerInfo) -> Void)?
        var onWorkerLost: ((WorkerInfo) -> Void)?
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
        get { state.value.clients }
        _modify { yield &state.value.clients }
    }

    /// The serial number of the next client session.
    var nextClient: Int {
        get { state.value.nextClient }
        _modify { yield &state.value.nextClient }
    }

    /// Connections accepted that have not had their hello accepted yet, by the role their
    /// listener takes.
    var handshakes: [Hello.Role: Int] {
        get { state.value.handshakes }
        _modify { yield &state.value.handshakes }
    }

    /// The handshake slots of connections that have not said hello, by door class and peer.
    var handshakeSlots: HandshakeSlots<Int> {
        get { state.value.handshakeSlots }
        _modify { yield &state.value.handshakeSlots }
    }

    /// The ticket of the next connection to take a handshake slot.
    var nextHandshake: Int {
        get { state.value.nextHandshake }
        _modify { yield &state.value.nextHandshake }
    }

    /// The connections holding a handshake slot, by ticket (to close one pushed out).
    var awaitingHello: [Int: FrameConnection] {
        get { state.value.awaitingHello }
        _modify { yield &state.value.awaitingHello }
    }

    /// Client connections open (handshakes included), by TCP peer address.
    var clientsByPeer: [String: Int] {
        get { state.value.clientsByPeer }
        _modify { yield &state.value.clientsByPeer }
    }

    /// Client sessions whose hello proved them admins.
    var adminSessions: Int {
        get { state.value.adminSessions }
        _modify { yield &state.value.adminSessions }
    }

    /// Hellos refused for the secret they presented (or did not).
    var unauthorizedHellos: Int {
        get { state.value.unauthorizedHellos }
        _modify { yield &state.value.unauthorizedHellos }
    }

    /// Requests refused `forbidden`: admin commands from clients.
    var forbiddenRequests: Int {
        get { state.value.forbiddenRequests }
        _modify { yield &state.value.forbiddenRequests }
    }

    /// Workers registered (connected or not), by kind: the numbers of their ids.
    var workerCount: [String: Int] {
        get { state.value.workerCount }
        _modify { yield &state.value.workerCount }
    }

    /// The connected workers' names, by kind: a second worker with a connected one's name is refused.
    var connectedWorkerNames: [String: Set<String>] {
        get { state.value.connectedWorkerNames }
        _modify { yield &state.value.connectedWorkerNames }
    }

    /// Worker connections, handshakes on the worker listener included.
    var workerConnections: Int {
        get { state.value.workerConnections }
        _modify { yield &state.value.workerConnections }
    }

    /// Requests answered `overloaded` because ``Configuration/Limits/inFlight`` were in flight,
    /// or because their client left more than ``Configuration/Limits/clientQueueBytes`` of
    /// answers unread.
    var overloadedRequests: Int {
        get { state.value.overloadedRequests }
        _modify { yield &state.value.overloadedRequests }
    }

    /// Connections closed at once because a cap was reached.
    var refusedConnections: Int {
        get { state.value.refusedConnections }
        _modify { yield &state.value.refusedConnections }
    }

    /// Client connections closed because they did not read their answers.
    var slowReadersClosed: Int {
        get { state.value.slowReadersClosed }
        _modify { yield &state.value.slowReadersClosed }
    }

    /// Client connections closed after ``Configuration/Limits/idleTimeout`` of silence.
    var idleClientsClosed: Int {
        get { state.value.idleClientsClosed }
        _modify { yield &state.value.idleClientsClosed }
    }

    /// Workers taken out of rotation for missing two heartbeats.
    var unresponsiveWorkers: Int {
        get { state.value.unresponsiveWorkers }
        _modify { yield &state.value.unresponsiveWorkers }
    }

    /// What decides, beat by beat, which workers have been silent too long.
    var heartbeatJudge: HeartbeatJudge {
        get { state.value.heartbeatJudge }
        _modify { yield &state.value.heartbeatJudge }
    }

    /// The kinds a `scale` is under way for.
    var scalingKinds: Set<String> {
        get { state.value.scalingKinds }
        _modify { yield &state.value.scalingKinds }
    }

    var draining: Bool {
        get { state.value.draining }
        _modify { yield &state.value.draining }
    }

    /// Whether a second signal cut the drain short (see ``stopWaitingForDrain()``).
    var drainCutShort: Bool {
        get { state.value.drainCutShort }
        _modify { yield &state.value.drainCutShort }
    }

    /// What the requests came to: totals, and the last minute per domain.
    var statistics: RequestStatistics {
        get { state.value.statistics }
        _modify { yield &state.value.statistics }
    }

    /// The local workers' supervisor, when the coordinator runs in `monarch up`: it starts and
    /// stops workers for `scale`, and kills the unresponsive ones. Loop thread only.
    var supervisor: Supervisor? {
        get { state.value.supervisor }
        _modify { yield &state.value.supervisor }
    }

    /// Log lines about peers (refusals, protocol errors), kept to a few per interval.
    var peerLog: LogLimiter {
        get { state.value.peerLog }
        _modify { yield &state.value.peerLog }
    }

    /// Log lines about admin exchanges clients may send at will (invalidations), likewise.
    var adminLog: LogLimiter {
        get { state.value.adminLog }
        _modify { yield &state.value.adminLog }
    }

    /// Every client's watches (`watch` messages), at most `limits.watchesPerClient` each.
    var watches: WatchRegistry {
        get { state.value.watches }
        _modify { yield &state.value.watches }
    }

    /// `changed` events sent to watchers, and dropped for watchers that did not read.
    var watchEventsSent: Int {
        get { state.value.watchEventsSent }
        _modify { yield &state.value.watchEventsSent }
    }

    var watchEventsDropped: Int {
        get { state.value.watchEventsDropped }
        _modify { yield &state.value.watchEventsDropped }
    }

    /// The ids of the shared-store changes the watchers were told of lately.
    var recentSharedChanges: RecentChanges {
        get { state.value.recentSharedChanges }
        _modify { yield &state.value.recentSharedChanges }
    }

    /// Changes other coordinators made to the shared store that the watchers were told of
    /// (each once, however many workers forwarded it).
    var sharedChangesHeard: Int {
        get { state.value.sharedChangesHeard }
        _modify { yield &state.value.sharedChangesHeard }
    }

    /// Told about each worker that registers. Loop thread.
    public var onWorkerRegistered: (@Sendable (WorkerInfo) -> Void)? {
        get { state.value.onWorkerRegistered }
        set { state.value.onWorkerRegistered = newValue }
    }

    /// Told about each registered worker whose connection ended. Loop thread.
    public var onWorkerLost: ((WorkerInfo) -> Void)? {
        get { state.value.onWorkerLost }
        set { state.value.onWorkerLost = newValue }
    }
}
