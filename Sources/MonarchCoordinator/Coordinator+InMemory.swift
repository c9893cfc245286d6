import MonarchTransport
import MonarchWire

// Clients and workers attached inside the process over in-memory connections
// (``InMemoryConnection``): their messages are passed as values, never encoded, and they are
// served as those on a socket are.
extension Coordinator {
    /// Attaches a client in this process over an in-memory connection (``InMemoryConnection``):
    /// returns the client's end, on this coordinator's loop, whose first message is the
    /// `welcome`. Its messages are passed as values, never encoded; otherwise the client is
    /// served as one on a socket is (its share of requests, back-pressure, the answer window).
    /// No hello is read: `token` is the secret its hello would present, and earns the role a
    /// hello on a connection made inside the process (``connectInProcess(as:)``) earns with it.
    ///
    /// - Throws: ``ProtocolError`` when the secret earns no role (`unauthorized`), the
    ///   coordinator is shutting down, or the client connections are at
    ///   ``Configuration/Limits/clients`` (the last ``Configuration/Limits/adminClients`` of
    ///   them kept for admins).
    public func attachInMemoryClient(token: String? = nil) throws(ProtocolError) -> InMemoryConnection {
        guard let role = roleGate.clientRole(presenting: token, at: Door(takes: .client, isUnixSocket: true, isLocal: true)) else {
            throw ProtocolError(.unauthorized, "this coordinator requires a valid token")
        }
        if draining { throw ProtocolError(.unexpectedMessage, "the coordinator is shutting down") }
        let open = clients.count + handshakes[.client, default: 0]
        if open >= limits.clients || (role == .client && clients.count - adminSessions >= limits.clients - adminReserve) {
            refusedConnections += 1
            throw ProtocolError(.unexpectedMessage, "\(open) client connections are open (limits.clients, limits.adminClients)")
        }
        let (ours, theirs) = InMemoryConnection.pair(on: loop)
        admitClient(ours, role: role, peer: nil, features: nil)
        ours.start()
        return theirs
    }

    /// Attaches a worker in this process over an in-memory connection (``InMemoryConnection``):
    /// returns the worker's end, on this coordinator's loop, whose first message is the
    /// `welcome` (with the worker's id and the heartbeat) once it starts reading. No hello is
    /// read: `hello` is the one the worker would send, and it is admitted as a hello on a worker
    /// connection made inside the process (``connectInProcess(as:)``) is — its secret, its
    /// name, the protocol version — and registered in its kind's pool with its capacity. From
    /// then on the coordinator sends it requests, cancels, pings and admin messages as values,
    /// and takes its answers as a socket's; its end's close is the worker's loss. No extension
    /// (``WireFeature``) is agreed to.
    ///
    /// - Throws: ``ProtocolError`` when the hello would be refused (`unauthorized`,
    ///   `unsupportedVersion`, `invalidField` for a bad name, `unexpectedMessage` for a client's
    ///   hello, a name in use or a shutdown), or the worker connections are at
    ///   ``Configuration/Limits/workers``; nothing is registered then.
    public func attachInMemoryWorker(_ hello: Hello) throws(ProtocolError) -> InMemoryConnection {
        if workerConnections >= limits.workers {
            refusedConnections += 1
            throw ProtocolError(.unexpectedMessage, "\(workerConnections) worker connections are open (limits.workers)")
        }
        if case .refused(let refusal) = admission(of: .hello(hello), at: Door(takes: .worker, isUnixSocket: true, isLocal: true)) {
            throw refusal
        }
        let (ours, theirs) = InMemoryConnection.pair(on: loop)
        // Given back when the session is lost, as a socket's is.
        workerConnections += 1
        admitWorker(ours, hello: hello, features: nil)
        ours.start()
        return theirs
    }
}
