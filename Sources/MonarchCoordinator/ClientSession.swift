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
            guard calls[request.id] == nil else {
                connection.fail(ProtocolError(
                    .unexpectedMessage, "request id \(request.id) is already in flight on this connection", id: request.id))
                return
            }
            calls[request.id] = Task(executorPreference: connection.loop) { [self] in
                let answer = await coordinator.answer(request)
                calls[request.id] = nil
                send(answer)
            }
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
            guard calls[admin.id] == nil else {
                connection.fail(ProtocolError(
                    .unexpectedMessage, "id \(admin.id) is already in flight on this connection", id: admin.id))
                return
            }
            calls[admin.id] = Task(executorPreference: connection.loop) { [self] in
                let answer = await coordinator.invalidate(admin)
                calls[admin.id] = nil
                send(answer)
            }
        case .store(let admin):
            send(unsupported(admin.id, "store"))
        case .error(let error):
            coordinator.logger.warning("a client reported a protocol error: \(error.code.rawValue): \(error.message)")
        default:
            connection.fail(ProtocolError(.unexpectedMessage, "a client does not send \(message.type) messages here"))
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
