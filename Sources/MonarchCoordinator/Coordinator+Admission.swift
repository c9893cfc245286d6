import Logging
import Monarch
import MonarchConfig
import MonarchLoop
import MonarchWire

// How connections get in: the hello, the token, and a client or worker session.
extension Coordinator {
    /// Waits for the `hello` of a new connection, then hands it to a client or worker session.
    func greet(_ stream: StreamConnection, as role: Hello.Role, requiresToken: Bool) {
        let connection = FrameConnection(stream: stream, maxFrameBytes: configuration.maxFrameBytes)
        let deadline = try? LoopTimer(on: loop)
        deadline?.start(afterMs: Self.helloTimeoutMs) {
            connection.fail(ProtocolError(.unexpectedMessage, "no hello within \(Self.helloTimeoutMs) ms"))
        }
        connection.onEnd = { _ in deadline?.close() }
        connection.onMessage = { [unowned self] message in
            deadline?.close()
            guard case .hello(let hello) = message else {
                connection.fail(ProtocolError(.unexpectedMessage, "the first message must be hello, not \(message.type)"))
                return
            }
            // The highest version this coordinator speaks that is ≤ the hello's (protocol section 4):
            // version 1 for any hello, since the codec accepts no version below 1.
            guard hello.version >= WireProtocol.version else {
                connection.fail(ProtocolError(
                    .unsupportedVersion, "this coordinator speaks protocol version \(WireProtocol.version), not \(hello.version)"))
                return
            }
            if requiresToken, !Self.tokensMatch(hello.token, configuration.token) {
                connection.fail(ProtocolError(.unauthorized, "this listener requires a valid token"))
                return
            }
            guard hello.role == role else {
                connection.fail(ProtocolError(
                    .unexpectedMessage, "this address takes \(role.rawValue) connections, not \(hello.role.rawValue)s"))
                return
            }
            if draining {
                connection.fail(ProtocolError(.unexpectedMessage, "the coordinator is shutting down"))
                return
            }
            switch role {
            case .client: admitClient(connection)
            case .worker: admitWorker(connection, hello: hello)
            }
        }
        connection.start()
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

    private func admitClient(_ connection: FrameConnection) {
        let session = ClientSession(connection: connection, coordinator: self)
        clients[ObjectIdentifier(session)] = session
        try? connection.send(.welcome(Welcome(maxFrameBytes: configuration.maxFrameBytes)))
    }

    func clientLeft(_ session: ClientSession) {
        clients[ObjectIdentifier(session)] = nil
    }

    private func admitWorker(_ connection: FrameConnection, hello: Hello) {
        let kind = hello.kind ?? "worker"
        let pool: WorkerPool
        if let existing = pools[kind] {
            pool = existing
        } else {
            // A kind no domain names: it registers, but no request will reach it.
            logger.warning("a \(kind) worker registered, but no domain uses \(kind) workers")
            pool = CachePool.kinds.contains(kind)
                ? CachePool(kind: kind, loop: loop, logger: logger) : WorkerPool(kind: kind, loop: loop)
        }
        workerCount[kind, default: 0] += 1
        let id = "\(kind)-\(workerCount[kind]!)"
        let worker = WorkerSession(id: id, hello: hello, connection: connection, logger: logger)
        let info = WorkerInfo(id: id, kind: kind, pid: hello.pid)
        // The closure keeps the pool alive: a pool made here for a stray kind has no other owner.
        // The cycle (pool → worker → closure → pool) ends when the worker's connection does.
        worker.onLost = { [unowned self, pool] worker in
            pool.remove(worker)
            onWorkerLost?(info)
        }
        if pool is CachePool, pool.connected.contains(where: { $0.shardName == worker.shardName }) {
            // Keys are sharded on names: two workers with one name would share one share of keys.
            logger.warning("""
                cache worker \(id) registered with the name "\(worker.shardName)" of another connected cache \
                worker; sharding on "\(worker.shardName)#\(id)" instead. Give each cache worker a unique --name, \
                or its keys move whenever it restarts.
                """)
            worker.shardName = "\(worker.shardName)#\(id)"
        }
        pool.add(worker)
        try? connection.send(.welcome(Welcome(maxFrameBytes: configuration.maxFrameBytes, workerId: id)))
        logger.info("worker \(id) registered (\(hello.name ?? kind), pid \(hello.pid.map(String.init) ?? "?"))")
        onWorkerRegistered?(info)
    }
}
