import Logging
import MonarchConfig
import MonarchLoop
import MonarchWire

/// The coordinator's HTTP/1.1 listeners (`listen.http`): each connection is an
/// ``HTTPSession`` answering through the same routes, domains and chain as the wire
/// protocol's clients, at most `limits.httpConnections` at once (more are closed at once).
///
/// An actor isolated to the coordinator's loop: libuv's callbacks, which run there, enter
/// through `assumeIsolated`.
public actor HTTPFrontDoor {
    public nonisolated let loop: EventLoop
    public nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
    private let coordinator: Coordinator
    private let addresses: [SocketAddress]
    private let logger: Logger
    private var listeners: [Listener] = []
    private var sessions: [Int: HTTPSession] = [:]
    /// Connections closed at once because `limits.httpConnections` were open.
    private(set) var refused = 0

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
                        assumeIsolated { $0.accept(stream) }
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
        for session in sessions.values { session.assumeIsolated { $0.close() } }
        sessions = [:]
    }

    private func accept(_ stream: StreamConnection) {
        let limits = coordinator.limits
        guard sessions.count < limits.httpConnections else {
            refused += 1
            stream.close()
            return
        }
        let id = coordinator.takeClientID()
        let session = HTTPSession(id: id, connection: stream, coordinator: coordinator, limits: limits) { [unowned self] id in
            assumeIsolated { $0.sessions[id] = nil }
        }
        sessions[id] = session
        session.assumeIsolated { $0.start() }
    }
}
