import Logging
import Monarch
import MonarchConfig
import MonarchLoop
import MonarchTransport
import MonarchWire

// How connections get in: the caps, the handshake slots, the hello, the secret and its role,
// and a client or worker session.
extension Coordinator {
    /// Takes a new connection that came in at `door`, or closes it at once when a cap is
    /// reached: client connections (``Configuration/Limits/clients``, of which
    /// ``adminReserve`` are kept for admins), client connections from its TCP peer
    /// (``Configuration/Limits/clientsPerPeer``), or worker connections
    /// (``Configuration/Limits/workers``) — so clients can never take the descriptors workers
    /// need. Until its hello, it holds a handshake slot of its door's class (see
    /// ``HandshakeSlots``): strangers that never say hello push out each other, not a client or
    /// a worker that does.
    func accept(_ stream: StreamConnection, at door: Door) {
        let peer = stream.peerHost
        let role = door.takes
        let why: String?
        if draining {
            why = "the coordinator is shutting down"
        } else if role == .client, clients.count + handshakes[.client, default: 0] >= limits.clients {
            why = "\(clients.count + handshakes[.client, default: 0]) client connections are open (limits.clients)"
        } else if role == .client, let peer, clientsByPeer[peer, default: 0] >= limits.clientsPerPeer {
            why = "\(peer) holds \(clientsByPeer[peer, default: 0]) client connections (limits.clientsPerPeer)"
        } else if role == .worker, workerConnections >= limits.workers {
            why = "\(workerConnections) worker connections are open (limits.workers)"
        } else {
            why = nil
        }
        if let why {
            refusedConnections += 1
            peerLog.log(.warning, "refused a \(role.rawValue) connection: \(why)", to: logger)
            stream.close()
            return
        }
        let ticket = nextHandshake
        nextHandshake += 1
        let doorClass: HandshakeSlots<Int>.DoorClass = role == .worker ? .workers : door.isUnixSocket ? .unixClients : .tcpClients
        if let pushedOut = handshakeSlots.take(ticket, from: peer ?? HandshakeSlots<Int>.localPeer, in: doorClass) {
            refusedConnections += 1
            peerLog.log(
                .warning,
                "closed a \(role.rawValue) connection that had not said hello, to make room for a new one from "
                    + "\(peer ?? "this machine") (limits.handshakes, limits.handshakesPerPeer)",
                to: logger)
            awaitingHello[pushedOut]?.close()
        }
        handshakes[role, default: 0] += 1
        if role == .worker { workerConnections += 1 }
        if role == .client, let peer { clientsByPeer[peer, default: 0] += 1 }
        greet(stream, at: door, peer: peer, ticket: ticket)
    }

    /// The client connections of ``Configuration/Limits/clients`` kept for admins:
    /// ``Configuration/Limits/adminClients``, at most half of them.
    var adminReserve: Int { min(limits.adminClients, limits.clients / 2) }

    /// Frees a client connection's place in its TCP peer's count.
    func clientConnectionEnded(peer: String?) {
        guard let peer else { return }
        let left = clientsByPeer[peer, default: 1] - 1
        clientsByPeer[peer] = left > 0 ? left : nil
    }

    /// Waits for the `hello` of a new connection, then hands it to a client or worker session.
    /// Until the hello is accepted, frames above ``Configuration/Limits/helloFrameBytes`` end
    /// the connection.
    private func greet(_ stream: StreamConnection, at door: Door, peer: String?, ticket: Int) {
        let role = door.takes
        let connection = FrameConnection(stream: stream, maxFrameBytes: limits.helloFrameBytes)
        awaitingHello[ticket] = connection
        let deadline = try? LoopTimer(on: loop)
        let helloTimeoutMs = limits.helloTimeout.wholeMilliseconds
        // Over once: the connection waits for its hello under its ticket until then.
        let handshakeOver: @CoordinatorActor () -> Void = { [self] in
            guard awaitingHello[ticket] === connection else { return }
            awaitingHello[ticket] = nil
            deadline?.close()
            handshakes[role, default: 0] -= 1
            handshakeSlots.release(ticket)
        }
        deadline?.start(afterMs: helloTimeoutMs) {
            // The slot is free from now, not from when the error has been written.
            CoordinatorActor.assumeIsolated { handshakeOver() }
            connection.fail(ProtocolError(.unexpectedMessage, "no hello within \(helloTimeoutMs) ms"))
        }
        // Until a session takes the connection over (and sets its own `onEnd`), its end is the
        // handshake's.
        connection.onEnd = { [unowned self] end in
            CoordinatorActor.assumeIsolated { handshakeEnded(end, role: role, peer: peer, over: handshakeOver) }
        }
        connection.onMessage = { [unowned self] message in
            CoordinatorActor.assumeIsolated { hello(message, on: connection, at: door, peer: peer, over: handshakeOver) }
        }
        connection.start()
    }

    /// The end of a connection whose handshake was not over.
    private func handshakeEnded(
        _ end: FrameConnection.End, role: Hello.Role, peer: String?, over handshakeOver: () -> Void
    ) {
        handshakeOver()
        if role == .worker { workerConnections -= 1 } else { clientConnectionEnded(peer: peer) }
        if case .protocolError(let error) = end {
            peerLog.log(.info, "a \(role.rawValue) connection failed its handshake: \(error)", to: logger)
        }
    }

    /// The first message on `connection`, which came in at `door`: a hello that admits a
    /// client or a worker; anything else fails the connection.
    private func hello(
        _ message: WireMessage, on connection: FrameConnection, at door: Door, peer: String?,
        over handshakeOver: () -> Void
    ) {
        handshakeOver()
        let clientRole: ClientRole?
        switch admission(of: message, at: door) {
        case .refused(let refusal):
            if refusal.code == .unauthorized { unauthorizedHellos += 1 }
            connection.fail(refusal)
            return
        case .admitted(let role):
            clientRole = role
        }
        guard case .hello(let hello) = message else { return }
        connection.maxInboundFrameBytes = limits.maxFrameBytes
        connection.maxOutboundFrameBytes = limits.maxFrameBytes
        let agreed = WireFeature.agreed(to: hello.features)
        let features = agreed.isEmpty ? nil : agreed
        if let clientRole {
            admitClient(connection, role: clientRole, peer: peer, features: features)
        } else {
            admitWorker(connection, hello: hello, features: features)
        }
        // Frames after the welcome may use what it agreed to.
        connection.rawBodies = agreed.contains(WireFeature.rawBodies)
    }

    /// What a connection's first message earns it.
    enum Admission {
        /// In: as a client of this role, or (nil) as a worker.
        case admitted(ClientRole?)
        /// Out, with the error it is told.
        case refused(ProtocolError)
    }

    /// Whether a connection's first message at `door` lets it in, and as what: not a hello, a
    /// version, secret or role that does not fit, a shutdown, client slots kept for admins,
    /// or a worker name in use keep it out.
    func admission(of message: WireMessage, at door: Door) -> Admission {
        let role = door.takes
        guard case .hello(let hello) = message else {
            return .refused(ProtocolError(.unexpectedMessage, "the first message must be hello, not \(message.type)"))
        }
        // The highest version this coordinator speaks that is ≤ the hello's (protocol section 4):
        // version 1 for any hello, since the codec accepts no version below 1.
        guard hello.version >= WireProtocol.version else {
            return .refused(ProtocolError(
                .unsupportedVersion, "this coordinator speaks protocol version \(WireProtocol.version), not \(hello.version)"))
        }
        var clientRole: ClientRole?
        if role == .worker, let name = hello.name, let key = localWorkerKeys.key(for: name) {
            // A name of a worker this coordinator starts: only that worker, with its key.
            if !RoleGate.matches(hello.token, key) {
                return .refused(ProtocolError(
                    .unauthorized, "\(LogText.quoted(name)) is the name of a worker this coordinator starts; choose another --name"))
            }
        } else if role == .worker {
            guard roleGate.admitsWorker(presenting: hello.token, at: door) else {
                return .refused(ProtocolError(
                    .unauthorized,
                    "this listener takes workers with the worker secret (auth.workerToken; workers present MONARCH_WORKER_TOKEN)"))
            }
        } else {
            guard let earned = roleGate.clientRole(presenting: hello.token, at: door) else {
                return .refused(ProtocolError(.unauthorized, "this listener requires a valid token"))
            }
            clientRole = earned
        }
        guard hello.role == role else {
            return .refused(ProtocolError(
                .unexpectedMessage, "this address takes \(role.rawValue) connections, not \(hello.role.rawValue)s"))
        }
        if draining { return .refused(ProtocolError(.unexpectedMessage, "the coordinator is shutting down")) }
        if clientRole == .client, clients.count - adminSessions >= limits.clients - adminReserve {
            refusedConnections += 1
            return .refused(ProtocolError(
                .unexpectedMessage,
                "\(limits.clients - adminReserve) client connections are open: the last \(adminReserve) of "
                    + "limits.clients are kept for admins (limits.adminClients)"))
        }
        if role == .worker, let name = hello.name, !Self.isValidWorkerName(name) {
            // A worker's name is its id in logs, status and metrics: printable, short.
            return .refused(ProtocolError(
                .invalidField,
                "a worker's name is 1 to 128 of A-Z a-z 0-9 . _ - @ :, not \(LogText.quoted(name))"))
        }
        if role == .worker, let name = hello.name, connectedWorkerNames[hello.kind ?? "worker", default: []].contains(name) {
            // Keys are sharded on names, and a name is how operators find a worker: a second
            // worker with a connected one's name is an impostor or a mistake.
            return .refused(ProtocolError(
                .unexpectedMessage,
                "a \(hello.kind ?? "worker") worker named \(LogText.quoted(name)) is already connected; give each worker a unique --name"))
        }
        return .admitted(clientRole)
    }

    /// Whether `name` may name a worker: 1 to 128 characters from `A-Z a-z 0-9 . _ - @ :`.
    static func isValidWorkerName(_ name: String) -> Bool {
        (1...128).contains(name.utf8.count) && name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default:
                "._-@:".utf8.contains(byte)
            }
        }
    }

    /// Registers a client of `role` from TCP `peer` (nil: a Unix socket); its `welcome` lists
    /// `features`, the extensions agreed to (nil: none).
    func admitClient(_ connection: any MessageConnection, role: ClientRole, peer: String?, features: [String]?) {
        let id = takeClientID()
        let session = ClientSession(id: id, connection: connection, role: role, peer: peer, coordinator: self)
        clients[id] = session
        if role == .admin { adminSessions += 1 }
        let uptime = Int((clock.now - startedAt).wholeMilliseconds)
        try? connection.send(.welcome(Welcome(
            maxFrameBytes: limits.maxFrameBytes, features: features, release: MonarchRelease.version, uptimeMs: uptime)))
    }

    /// A number for a new client session (wire or HTTP), never given before.
    func takeClientID() -> Int {
        defer { nextClient += 1 }
        return nextClient
    }

    func clientLeft(_ session: ClientSession) {
        guard clients.removeValue(forKey: session.id) != nil else { return }
        if session.role == .admin { adminSessions -= 1 }
        clientConnectionEnded(peer: session.peer)
        watches.removeAll(of: session.id)
    }

    /// Registers a worker in its kind's pool; its `welcome` lists `features`, the extensions
    /// agreed to (nil: none).
    func admitWorker(_ connection: any MessageConnection, hello: Hello, features: [String]?) {
        let kind = hello.kind ?? "worker"
        // A kind no domain names: it registers, but no request will reach it. The closure below
        // keeps such a pool alive; the cycle (pool → worker → closure → pool) ends with the connection.
        let pool = pools[kind] ?? WorkerPool(kind: kind, role: PoolRole(workerKind: kind), clock: clock)
        if pools[kind] == nil { logger.warning("a \(kind) worker registered, but no domain uses \(kind) workers") }
        workerCount[kind, default: 0] += 1
        // A worker is known by its name, which it keeps across restarts (no two connected
        // workers of a kind share one); a nameless one by a number of the coordinator's.
        let id = hello.name ?? "\(kind)#\(workerCount[kind]!)"
        let worker = WorkerSession(id: id, hello: hello, connection: connection, logger: logger, clock: clock)
        let info = WorkerInfo(id: id, kind: kind, pid: hello.pid)
        if let name = hello.name { connectedWorkerNames[kind, default: []].insert(name) }
        worker.onLost = { [unowned self, pool] worker in
            workerConnections -= 1
            if let name = hello.name { connectedWorkerNames[kind]?.remove(name) }
            pool.remove(worker)
            onWorkerLost?(info)
        }
        // Only workers that keep responses have a shared store whose changes they pass on.
        if pool.role == .cache {
            worker.onSharedChange = { [unowned self, unowned worker] change in noteSharedChange(change, from: worker) }
        }
        pool.add(worker)
        try? connection.send(.welcome(Welcome(
            maxFrameBytes: limits.maxFrameBytes, workerId: id, heartbeatMs: Int(limits.heartbeat.wholeMilliseconds),
            origin: origin, features: features)))
        let name = hello.name.map { LogText.quoted($0) } ?? kind
        logger.info("worker \(id) registered (\(name), pid \(hello.pid.map(String.init) ?? "?"), capacity \(worker.capacity))")
        onWorkerRegistered?(info)
    }
}
