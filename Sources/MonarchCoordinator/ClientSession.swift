import Logging
import Monarch
import MonarchLoop
import MonarchWire

/// The coordinator's side of one client connection: each request runs as its own task, answers
/// go back in whatever order they are ready, a `cancel` reaches the request it names, and a
/// client that goes away takes its requests with it. Loop thread only.
final class ClientSession: @unchecked Sendable {
    let connection: FrameConnection
    private unowned let coordinator: Coordinator
    private var calls: [MessageID: Task<Void, Never>] = [:]

    init(connection: FrameConnection, coordinator: Coordinator) {
        self.connection = connection
        self.coordinator = coordinator
        connection.onMessage = { [unowned self] message in received(message) }
        connection.onEnd = { [self] _ in ended() }
    }

    /// Requests of this client in flight.
    var callsInFlight: Int { calls.count }

    private func received(_ message: WireMessage) {
        switch message {
        case .request(let request):
            startCall(request.id, "request") { [self] in await coordinator.answer(request) }
        case .cancel(let cancel):
            calls[cancel.id]?.cancel()
        case .ping(let ping):
            send(.pong(PongMessage(id: ping.id)))
        case .pong:
            // A reply to no exchange of ours: ignored (protocol section 5).
            break
        case .status(let status):
            send(.result(ResultMessage(id: status.id, data: coordinator.statusReport())))
        case .scale(let admin):
            send(unsupported(admin.id, "scale"))
        case .invalidate(let admin):
            startCall(admin.id, "invalidate") { [self] in await coordinator.invalidate(admin) }
        case .store(let admin):
            send(unsupported(admin.id, "store"))
        case .error(let error):
            coordinator.logger.warning("a client reported a protocol error: \(error.code.rawValue): \(error.message)")
        default:
            connection.fail(ProtocolError(.unexpectedMessage, "a client does not send \(message.type) messages here"))
        }
    }

    /// Runs `answer` as call `id` (a task of its own; a `cancel` for `id` cancels it) and sends
    /// what it returns. An id already in flight is the protocol error of section 5.
    private func startCall(_ id: MessageID, _ what: String, _ answer: @escaping @Sendable () async -> WireMessage) {
        guard calls[id] == nil else {
            connection.fail(ProtocolError(
                .unexpectedMessage, "\(what) id \(id) is already in flight on this connection", id: id))
            return
        }
        calls[id] = Task(executorPreference: connection.loop) { [self] in
            let reply = await answer()
            calls[id] = nil
            send(reply)
        }
    }

    private func unsupported(_ id: MessageID, _ what: String) -> WireMessage {
        .failure(FailureMessage(id: id, error: .init(code: "invalidRequest", message: "this coordinator does not support \(what) yet")))
    }

    /// Sends `message` if the client is still there; an answer too large for a frame becomes a failure.
    private func send(_ message: WireMessage) {
        guard connection.isOpen else { return }
        do {
            try connection.send(message)
        } catch {
            guard let id = message.id else { return }
            let failure = FailureMessage(
                id: id, error: .init(code: "responseTooLarge", message: "the answer does not fit in a frame: \(error)"))
            try? connection.send(.failure(failure))
        }
    }

    private func ended() {
        for call in calls.values { call.cancel() }
        calls.removeAll()
        coordinator.clientLeft(self)
    }
}
