import Logging
import Monarch
import MonarchConfig
import MonarchLoop
import MonarchWire

// How connections get in: the caps, the hello, the token, and a client or worker session.
extension Coordinator {
    /// Takes a new connection, or closes it at once when a cap is reached: handshakes under
    /// way (``Configuration/Limits/handshakes``), or connections of its listener's role
    /// (``Configuration/Limits/clients``, ``Configuration/Limits/workers``) — so clients can
    /// never take the descriptors workers need.
    func accept(_ stream: StreamConnection, as role: Hello.Role, requiresToken: Bool) {
        let pending = handshakes.values.reduce(0, +)
        let connections = role == .client ? clients.count + handshakes[.client, default: 0] : workerConnections
        let cap = role == .client ? limits.clients : limits.workers
        if draining || pending >= limits.handshakes || connections >= cap {
            refusedConnections += 1
            let why = draining ? "the coordinator is shutting down"
                : pending >= limits.handshakes ? "\(pending) connections have not said hello yet (limits.handshakes)"
                : "\(connections) \(role.rawValue) connections are open (limits.\(role.rawValue)s)"
            peerLog.log(.warning, "refused a \(role.rawValue) connection: \(why)", to: logger)
            stream.close()
            return
        }
        handshakes[role, default: 0] += 1
        if role == .worker { workerConnections += 1 }
        greet(stream, as: role, requiresToken: requiresToken)
    }

    /// Waits for the `hello` of a new connection, then hands it to a client or worker session.
    /// Until the hello is accepted, frames above ``Configuration/Limits/helloFrameBytes`` end
    /// the connection.
    private func greet(_ stream: StreamConnection, as role: Hello.Role, requiresToken: Bool) {
        let connection = FrameConnection(stream: stream, maxFrameBytes: limits.helloFrameBytes)
        let deadline = try? LoopTimer(on: loop)
        let helloTimeoutMs = limits.helloTimeout.wholeMilliseconds
        var handshaking = true
        func handshakeOver() {
            guard handshaking else { return }
            handshaking = false
            deadline?.close()
            handshakes[role, default: 0] -= 1
        }
        deadline?.start(afterMs: helloTimeoutMs) {
            // The slot is free from now, not from when the error has been written.
            handshakeOver()
            connection.fail(ProtocolError(.unexpectedMessage, "no hello within \(helloTimeoutMs) ms"))
        }
        connection.onEnd = { [unowned self] end in
            handshakeOver()
            if role == .worker { workerConnections -= 1 }
            if case .protocolError(let error) = end {
                peerLog.log(.info, "a \(role.rawValue) connection failed its handshake: \(error)", to: logger)
            }
        }
        connection.onMessage = { [unowned self] message in
            handshakeOver()
            if let refusal = refusal(of: message, as: role, requiresToken: requiresToken) {
                connection.fail(refusal)
                return
            }
            guard case .hello(let hello) = message else { return }
            connection.maxInboundFrameBytes = limits.maxFrameBytes
            connection.maxOutboundFrameBytes = limits.maxFrameBytes
            let agreed = WireFeature.agreed(to: hello.features)
            let features = agreed.isEmpty ? nil : agreed
            switch role {
            case .client: admitClient(connection, features: features)
            case .worker: admitWorker(connection, hello: hello, features: features)
            }
            // Frames after the welcome may use what it agreed to.
            connection.rawBodies = agreed.contains(WireFeature.rawBodies)
        }
        connection.start()
    }

    /// Why a connection's first message does not let it in, if it does not: not a hello, a
    /// version, token or role that does not fit, a shutdown, or a worker name in use.
    private func refusal(of message: WireMessage, as role: Hello.Role, requiresToken: Bool) -> ProtocolError? {
        guard case .hello(let hello) = message else {
            return ProtocolError(.unexpectedMessage, "the first message must be hello, not \(message.type)")
        }
        // The highest version this coordinator speaks that is ≤ the hello's (protocol section 4):
        // version 1 for any hello, since the codec accepts no version below 1.
        guard hello.version >= WireProtocol.version else {
            return ProtocolError(
                .unsupportedVersion, "this coordinator speaks protocol version \(WireProtocol.version), not \(hello.version)")
        }
        if role == .worker, let name = hello.name, let key = localWorkerKeys.key(for: name) {
            // A name of a worker this coordinator starts: only that worker, with its key.
            if !Self.tokensMatch(hello.token, key) {
                return ProtocolError(
                    .unauthorized, "\(LogText.quoted(name)) is the name of a worker this coordinator starts; choose another --name")
            }
        } else if requiresToken, !Self.tokensMatch(hello.token, configuration.token) {
            return ProtocolError(.unauthorized, "this listener requires a valid token")
        }
        guard hello.role == role else {
            return ProtocolError(
                .unexpectedMessage, "this address takes \(role.rawValue) connections, not \(hello.role.rawValue)s")
        }
        if draining { return ProtocolError(.unexpectedMessage, "the coordinator is shutting down") }
        if role == .worker, let name = hello.name, !Self.isValidWorkerName(name) {
            // A worker's name is its id in logs, status and metrics: printable, short.
            return ProtocolError(
                .invalidField,
                "a worker's name is 1 to 128 of A-Z a-z 0-9 . _ - @ :, not \(LogText.quoted(name))")
        }
        if role == .worker, let name = hello.name, connectedWorkerNames[hello.kind ?? "worker", default: []].contains(name) {
            // Keys are sharded on names, and a name is how operators find a worker: a second
            // worker with a connected one's name is an impostor or a mistake.
            return ProtocolError(
                .unexpectedMessage,
                "a \(hello.kind ?? "worker") worker named \(LogText.quoted(name)) is already connected; give each worker a unique --name")
        }
        return nil
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

    /// Whether a presented token is the configured one, in time that does not depend on where
    /// they differ (so the token cannot be guessed byte by byte).
    static func tokensMatch(_ presented: String?, _ expected: String?) -> Bool {
        guard let presented, let expected else { return false }
        let a = Array(presented.utf8), b = Array(expected.utf8)
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0 && a.count == b.count
    }

    /// Registers a client; its `welcome` lists `features`, the extensions agreed to (nil: none).
    private func admitClient(_ connection: FrameConnection, features: [String]?) {
        let id = nextClient
        nextClient += 1
        let session = ClientSession(id: id, connection: connection, coordinator: self)
        clients[id] = session
        try? connection.send(.welcome(Welcome(maxFrameBytes: limits.maxFrameBytes, features: features)))
    }

    func clientLeft(_ session: ClientSession) {
        clients[session.id] = nil
        watches.removeAll(of: session.id)
    }

    /// Registers a worker in its kind's pool; its `welcome` lists `features`, the extensions
    /// agreed to (nil: none).
    private func admitWorker(_ connection: FrameConnection, hello: Hello, features: [String]?) {
        let kind = hello.kind ?? "worker"
        // A kind no domain names: it registers, but no request will reach it. The closure below
        // keeps such a pool alive; the cycle (pool → worker → closure → pool) ends with the connection.
        let pool = pools[kind] ?? WorkerPool(kind: kind, loop: loop)
        if pools[kind] == nil { logger.warning("a \(kind) worker registered, but no domain uses \(kind) workers") }
        workerCount[kind, default: 0] += 1
        // A worker is known by its name, which it keeps across restarts (no two connected
        // workers of a kind share one); a nameless one by a number of the coordinator's.
        let id = hello.name ?? "\(kind)#\(workerCount[kind]!)"
        let worker = WorkerSession(id: id, hello: hello, connection: connection, logger: logger)
        let info = WorkerInfo(id: id, kind: kind, pid: hello.pid)
        if let name = hello.name { connectedWorkerNames[kind, default: []].insert(name) }
        worker.onLost = { [unowned self, pool] worker in
            workerConnections -= 1
            if let name = hello.name { connectedWorkerNames[kind]?.remove(name) }
            pool.remove(worker)
            onWorkerLost?(info)
        }
        worker.onSharedChange = { [unowned self, unowned worker] change in noteSharedChange(change, from: worker) }
        pool.add(worker)
        try? connection.send(.welcome(Welcome(
            maxFrameBytes: limits.maxFrameBytes, workerId: id, heartbeatMs: Int(limits.heartbeat.wholeMilliseconds),
            origin: origin, features: features)))
        let name = hello.name.map { LogText.quoted($0) } ?? kind
        logger.info("worker \(id) registered (\(name), pid \(hello.pid.map(String.init) ?? "?"), capacity \(worker.capacity))")
        onWorkerRegistered?(info)
    }
}
