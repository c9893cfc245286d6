import Logging
import MonarchConfig
import MonarchHTTP
import MonarchLoop
import MonarchWire

/// The coordinator's HTTP/1.1 listeners (`listen.http`): each connection is an
/// ``HTTPSession`` answering through the same routes, domains and chain as the wire
/// protocol's clients, at most `limits.httpConnections` at once and
/// `limits.httpConnectionsPerPeer` from one TCP peer address. A newcomer at a full door takes
/// the place of an idle connection of the peer holding the most, when that peer holds more
/// than the newcomer's would: one stranger's idle connections cannot lock others out.
///
/// It runs on ``CoordinatorActor``, as the coordinator does; libuv's callbacks, which run on
/// its loop, enter through `assumeIsolated`.
@CoordinatorActor
public final class HTTPFrontDoor {
    public nonisolated let loop: EventLoop
    private let coordinator: Coordinator
    private let addresses: [SocketAddress]
    private let logger: Logger
    private var listeners: [Listener] = []
    private var sessions: [Int: HTTPSession] = [:]
    /// The TCP peer address of each session that has one.
    private var peers: [Int: String] = [:]
    /// How many sessions each TCP peer address holds.
    private var sessionsByPeer: [String: Int] = [:]

    /// The listeners as bound (a `tcp:…:0` shows the chosen port).
    public private(set) var boundAddresses: [SocketAddress] = []

    /// A front door for `coordinator` on its configuration's `listen.http`.
    public init(coordinator: Coordinator, logger: Logger) {
        self.coordinator = coordinator
        self.loop = coordinator.loop
        self.addresses = coordinator.configuration.listen.http
        self.logger = logger
    }

    /// Listens on every address; on a failure, nothing is left listening.
    ///
    /// - Throws: ``HTTPListenError`` naming the address that cannot be bound.
    public func start() throws(HTTPListenError) {
        do throws(HTTPListenError) {
            for address in addresses {
                let listener: Listener
                do {
                    listener = try Listener(address: address, on: loop) { [unowned self] stream in
                        CoordinatorActor.assumeIsolated { accept(stream) }
                    }
                } catch {
                    throw HTTPListenError(address: address, underlying: error)
                }
                listeners.append(listener)
                boundAddresses.append(listener.boundAddress)
            }
        } catch {
            for listener in listeners { listener.close() }
            listeners = []
            boundAddresses = []
            throw error
        }
    }

    /// Stops taking new connections; those open go on.
    public func stopListening() {
        for listener in listeners { listener.close() }
        listeners = []
    }

    /// Stops listening and closes every connection.
    public func close() {
        stopListening()
        for session in sessions.values { session.close() }
        sessions = [:]
    }

    private func accept(_ stream: StreamConnection) {
        let limits = coordinator.limits
        let peer = stream.peerHost
        if let peer, sessionsByPeer[peer, default: 0] >= limits.httpConnectionsPerPeer {
            return refuse(stream, "\(peer) holds \(sessionsByPeer[peer, default: 0]) HTTP connections (limits.httpConnectionsPerPeer)")
        }
        if sessions.count >= limits.httpConnections {
            guard let idle = idleSessionOfTheLargestPeer(besides: peer) else {
                return refuse(stream, "\(sessions.count) HTTP connections are open (limits.httpConnections)")
            }
            coordinator.refusedConnections += 1
            coordinator.peerLog.log(
                .warning, "closed an idle HTTP connection of \(peers[idle.id] ?? "?"), the peer holding the most, to make room for one from \(peer ?? "this machine") (limits.httpConnections)",
                to: logger)
            idle.close()
        }
        let id = coordinator.takeClientID()
        let session = HTTPSession(id: id, door: self, connection: stream, coordinator: coordinator, limits: limits) {
            [unowned self] id in ended(id)
        }
        sessions[id] = session
        if let peer {
            peers[id] = peer
            sessionsByPeer[peer, default: 0] += 1
        }
        session.start()
    }

    /// Closes `stream` at once, counted and logged with `why`.
    private func refuse(_ stream: StreamConnection, _ why: String) {
        coordinator.refusedConnections += 1
        coordinator.peerLog.log(.warning, "refused an HTTP connection: \(why)", to: logger)
        stream.close()
    }

    /// An idle session of the TCP peer holding the most sessions, when that peer holds more
    /// than `newcomer` would with one more; nil when there is none.
    private func idleSessionOfTheLargestPeer(besides newcomer: String?) -> HTTPSession? {
        guard let (largest, held) = sessionsByPeer.max(by: { $0.value < $1.value }),
            held > (newcomer.map { sessionsByPeer[$0, default: 0] } ?? 0) + 1
        else { return nil }
        for (id, session) in sessions where peers[id] == largest && session.isIdle {
            return session
        }
        return nil
    }

    /// The session numbered `id`; nil once it has ended (``HTTPSession`` told the door so when
    /// it cleaned up; one that only stopped answering, and closes after its writes, is still here).
    func session(_ id: Int) -> HTTPSession? { sessions[id] }

    /// Ends the exchange of a `PURGE` and gives its answer to the session numbered `id`, if it
    /// is still open.
    func purged(_ answer: [UInt8], closing: Bool, session id: Int) {
        coordinator.exchangeFinished()
        sessions[id]?.purged(answer, closing: closing)
    }

    /// Gives the answer to `request` to the session numbered `id`, if it is still open.
    func deliver(_ answer: ClientAnswer, to request: HTTPRequest, closing: Bool, session id: Int) {
        sessions[id]?.deliver(answer, to: request, closing: closing)
    }

    private func ended(_ id: Int) {
        sessions[id] = nil
        guard let peer = peers.removeValue(forKey: id) else { return }
        let left = sessionsByPeer[peer, default: 1] - 1
        sessionsByPeer[peer] = left > 0 ? left : nil
    }
}
