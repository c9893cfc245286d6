import DequeModule
import Logging
import Monarch
import MonarchLoop
import MonarchWire

/// The coordinator's side of one client connection: each request runs as its own task, answers
/// go back in whatever order they are ready, a `cancel` reaches the request it names, and a
/// client that goes away takes its requests with it.
///
/// A client is held to its share, and its answers to what it reads:
/// - at most ``Configuration/Limits/inFlightPerClient`` exchanges are in flight or waiting to
///   start; more are answered `overloaded`;
/// - exchanges start only while the answers already queued for the client are under the
///   stream's high watermark, and only as many at once as the answers seen so far on this
///   connection fit in ``Configuration/Limits/clientQueueBytes`` (16 before any is seen): a
///   client pipelining a hundred large reads gets them as fast as it takes them, and one that
///   takes none holds a bounded amount;
/// - while exchanges wait to start, nothing more is read from the client (the kernel, then the
///   client, waits);
/// - a client that still leaves more than ``Configuration/Limits/clientQueueBytes`` unread is
///   not reading at all: its connection is closed.
/// Loop thread only.
final class ClientSession: @unchecked Sendable {
    /// The coordinator's serial number for this client (its turn in the queues).
    let id: Int
    let connection: FrameConnection
    private unowned let coordinator: Coordinator
    private var calls: [MessageID: Task<Void, Never>] = [:]
    /// Exchanges read and not started yet, in arrival order.
    private var waiting: Deque<(id: MessageID, what: String, answer: @Sendable () async -> WireMessage)> = []
    /// The ids of ``waiting``, for the duplicate check and cancels.
    private var waitingIDs: Set<MessageID> = []
    /// The sizes of the last answers sent, in bytes: the largest of them sizes the window.
    private var recentAnswers: Deque<Int> = []
    /// How many answer sizes ``recentAnswers`` keeps.
    private static let answersRemembered = 32
    /// When a frame last arrived (or the last call ended).
    private var lastActivity = ContinuousClock.now

    init(id: Int, connection: FrameConnection, coordinator: Coordinator) {
        self.id = id
        self.connection = connection
        self.coordinator = coordinator
        connection.onMessage = { [unowned self] message in received(message) }
        connection.onEnd = { [self] _ in ended() }
        // Back-pressure: waiting exchanges start (and reading resumes) once answers were taken.
        connection.stream.onWritabilityChanged = { [unowned self] writable in
            if writable { startWaiting() }
        }
    }

    /// Exchanges of this client in flight or waiting to start.
    var callsInFlight: Int { calls.count + waiting.count }

    /// How many exchanges may run at once now: as many as answers the size of the largest of
    /// the recent ones fit in the client's queue (16 before any was sent), within its share.
    private var window: Int {
        let limits = coordinator.limits
        guard let largest = recentAnswers.max() else { return min(16, limits.inFlightPerClient) }
        return max(1, min(limits.inFlightPerClient, limits.clientQueueBytes / max(largest, 1)))
    }

    /// Whether the client has nothing in flight and has sent nothing for `timeout`.
    func isIdle(now: ContinuousClock.Instant, timeout: Duration) -> Bool {
        calls.isEmpty && waiting.isEmpty && now - lastActivity > timeout && connection.isOpen
    }

    private func received(_ message: WireMessage) {
        lastActivity = .now
        switch message {
        case .request(let request):
            startCall(request.id, "request") { [self] in await coordinator.answer(request, for: id) }
        case .cancel(let cancel):
            if waitingIDs.contains(cancel.id) {
                // Not started: answered at once, never started.
                waitingIDs.remove(cancel.id)
                waiting.removeAll { $0.id == cancel.id }
                send(.failure(FailureMessage(id: cancel.id, error: ChainError(.cancelled, "the request was cancelled").detail)))
            } else {
                calls[cancel.id]?.cancel()
            }
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

    /// Queues `answer` as call `id` and starts what may start (see the type's rules). An id
    /// already in flight is the protocol error of section 5; a call past the client's share is
    /// answered `overloaded` at once.
    private func startCall(_ id: MessageID, _ what: String, _ answer: @escaping @Sendable () async -> WireMessage) {
        guard calls[id] == nil, !waitingIDs.contains(id) else {
            connection.fail(ProtocolError(
                .unexpectedMessage, "\(what) id \(id) is already in flight on this connection", id: id))
            return
        }
        let limit = coordinator.limits.inFlightPerClient
        guard callsInFlight < limit else {
            send(.failure(FailureMessage(id: id, error: ChainError(
                .overloaded, "this connection has \(limit) requests in flight (limits.inFlightPerClient); wait for answers first"
            ).detail)))
            return
        }
        waiting.append((id, what, answer))
        waitingIDs.insert(id)
        startWaiting()
    }

    /// Starts waiting exchanges while the client takes its answers and the window has room; reads
    /// from the client only while none waits.
    private func startWaiting() {
        while let next = waiting.first, connection.isOpen, connection.stream.isWritable, calls.count < window {
            waiting.removeFirst()
            waitingIDs.remove(next.id)
            let id = next.id
            let answer = next.answer
            calls[id] = Task(executorPreference: connection.loop) { [self] in
                let reply = await answer()
                calls[id] = nil
                lastActivity = .now
                send(reply)
                startWaiting()
            }
        }
        if waiting.isEmpty { connection.resume() } else { connection.pause() }
    }

    private func unsupported(_ id: MessageID, _ what: String) -> WireMessage {
        .failure(FailureMessage(id: id, error: ChainError(.invalidRequest, "this coordinator does not support \(what) yet").detail))
    }

    /// Sends `message` if the client is still there; an answer too large for a frame becomes a
    /// `responseTooLarge` failure. A client with more answers waiting than its queue allows is
    /// not reading them: its connection is closed.
    private func send(_ message: WireMessage) {
        guard connection.isOpen else { return }
        let before = connection.stream.queuedWriteBytes
        do {
            try connection.send(message)
            recentAnswers.append(max(connection.stream.queuedWriteBytes - before, 0))
            if recentAnswers.count > Self.answersRemembered { recentAnswers.removeFirst() }
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
        waiting.removeAll()
        waitingIDs.removeAll()
        coordinator.clientLeft(self)
    }
}
