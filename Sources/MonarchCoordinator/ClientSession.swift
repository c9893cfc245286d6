import Logging
import Monarch
import MonarchLoop
import MonarchWire

/// The coordinator's side of one client connection: each request runs as its own task, answers
/// go back in whatever order they are ready, a `cancel` reaches the request it names, and a
/// client that goes away takes its requests with it.
///
/// A client is held to its share: at most ``Configuration/Limits/inFlightPerClient`` exchanges
/// in flight (more are answered `overloaded`); while its answers wait unread above the
/// stream's high watermark, its requests are not read (the kernel, then the client, waits); and
/// when more than ``Configuration/Limits/clientQueueBytes`` of answers wait, it is not reading at
/// all and its connection is closed. Loop thread only.
final class ClientSession: @unchecked Sendable {
    /// The coordinator's serial number for this client (its turn in the queues).
    let id: Int
    let connection: FrameConnection
    private unowned let coordinator: Coordinator
    private var calls: [MessageID: Task<Void, Never>] = [:]
    /// When a frame last arrived (or the last call ended).
    private var lastActivity = ContinuousClock.now

    init(id: Int, connection: FrameConnection, coordinator: Coordinator) {
        self.id = id
        self.connection = connection
        self.coordinator = coordinator
        connection.onMessage = { [unowned self] message in received(message) }
        connection.onEnd = { [self] _ in ended() }
        // Back-pressure: no new requests are read while answers wait to be taken.
        connection.stream.onWritabilityChanged = { [weak connection] writable in
            if writable { connection?.resume() } else { connection?.pause() }
        }
    }

    /// Requests of this client in flight.
    var callsInFlight: Int { calls.count }

    /// Whether the client has nothing in flight and has sent nothing for `timeout`.
    func isIdle(now: ContinuousClock.Instant, timeout: Duration) -> Bool {
        calls.isEmpty && now - lastActivity > timeout && connection.isOpen
    }

    private func received(_ message: WireMessage) {
        lastActivity = .now
        switch message {
        case .request(let request):
            startCall(request.id, "request") { [self] in await coordinator.answer(request, for: id) }
        case .cancel(let cancel):
            calls[cancel.id]?.cancel()
        case .ping(let ping):
            send(.pong(PongMessage(id: ping.id)))
        case .pong:
            // A reply to no exchange of ours: ignored (protocol section 5).
            break
        case .status(let status):
            send(.result(ResultMessage(id: status.id, report: coordinator.statusReport())))
        case .scale(let admin):
            startCall(admin.id, "scale") { [self] in await coordinator.scale(admin) }
        case .invalidate(let admin):
            startCall(admin.id, "invalidate") { [self] in await coordinator.invalidate(admin) }
        case .store(let admin):
            send(unsupported(admin.id, "store"))
        case .error(let error):
            coordinator.peerLog.log(
                .warning, "client \(id) reported a protocol error: \(error.code.rawValue): \(LogText.sanitized(error.message))",
                to: coordinator.logger)
        default:
            connection.fail(ProtocolError(.unexpectedMessage, "a client does not send \(message.type) messages here"))
        }
    }

    /// Runs `answer` as call `id` (a task of its own; a `cancel` for `id` cancels it) and sends
    /// what it returns. An id already in flight is the protocol error of section 5; a call past
    /// the client's share is answered `overloaded` at once.
    private func startCall(_ id: MessageID, _ what: String, _ answer: @escaping @Sendable () async -> WireMessage) {
        guard calls[id] == nil else {
            connection.fail(ProtocolError(
                .unexpectedMessage, "\(what) id \(id) is already in flight on this connection", id: id))
            return
        }
        let limit = coordinator.limits.inFlightPerClient
        guard calls.count < limit else {
            send(.failure(FailureMessage(id: id, error: ChainError(
                .overloaded, "this connection has \(limit) requests in flight (limits.inFlightPerClient); wait for answers first"
            ).detail)))
            return
        }
        calls[id] = Task(executorPreference: connection.loop) { [self] in
            let reply = await answer()
            calls[id] = nil
            lastActivity = .now
            send(reply)
        }
    }

    private func unsupported(_ id: MessageID, _ what: String) -> WireMessage {
        .failure(FailureMessage(id: id, error: ChainError(.invalidRequest, "this coordinator does not support \(what) yet").detail))
    }

    /// Sends `message` if the client is still there; an answer too large for a frame becomes a
    /// `responseTooLarge` failure. A client with more answers waiting than its queue allows is
    /// not reading them: its connection is closed.
    private func send(_ message: WireMessage) {
        guard connection.isOpen else { return }
        do {
            try connection.send(message)
        } catch {
            guard let id = message.id else { return }
            let failure = FailureMessage(id: id, error: ChainError(
                .responseTooLarge, "the answer does not fit in a frame: \(error)").detail)
            try? connection.send(.failure(failure))
        }
        let queued = connection.stream.queuedWriteBytes
        let limit = coordinator.limits.clientQueueBytes
        if queued > limit {
            coordinator.slowReadersClosed += 1
            coordinator.peerLog.log(
                .warning, "closing client \(self.id): \(queued) bytes of answers wait unread, more than limits.clientQueue (\(limit))",
                to: coordinator.logger)
            connection.close()
        }
    }

    private func ended() {
        for call in calls.values { call.cancel() }
        calls.removeAll()
        coordinator.clientLeft(self)
    }
}
