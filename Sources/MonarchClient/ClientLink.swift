import Monarch
import MonarchLoop
import MonarchTransport
import MonarchWire
import Synchronization

/// One live connection to the coordinator, after the handshake: exchanges matched to their
/// answers by id, many in flight at once; a reader routing every message; heartbeats.
///
/// A message that answers no pending exchange and is not a late answer (response, failure,
/// result, pong) goes to `onPush` — the seam for messages the coordinator sends unasked.
final class ClientLink: Sendable {
    /// What an exchange ended with.
    enum Answer: Sendable {
        /// The coordinator's answer.
        case message(WireMessage)
        /// The calling task was cancelled (a `cancel` went to the coordinator if the message had gone out).
        case cancelled
        /// The connection ended first; `sent` says whether the message had been handed to it.
        case lost(reason: String, sent: Bool)
        /// The message cannot be sent at all (it does not fit in a frame); the link is fine.
        case unsendable(reason: String)
    }

    private enum Phase { case queued, sent, cancelledEarly }

    private struct State {
        var nextID: MessageID = 1
        var pending: [MessageID: CheckedContinuation<Answer, Never>] = [:]
        var phase: [MessageID: Phase] = [:]
        var ended: String?
        var lastHeard = ContinuousClock.now
        /// Why this side closed the link, when it did (heartbeats unanswered).
        var closeReason: String?
    }

    /// The connection to the coordinator, welcomed: a socket's frames or an in-process one's messages.
    let connection: AsyncMessageConnection
    /// What the coordinator said of itself when it accepted the connection.
    let welcome: Welcome
    /// When the welcome arrived.
    let welcomedAt: ContinuousClock.Instant
    private let state = Mutex(State())
    private let tasks = Mutex<[Task<Void, Never>]>([])

    private init(connection: AsyncMessageConnection, welcome: Welcome, welcomedAt: ContinuousClock.Instant) {
        self.connection = connection
        self.welcome = welcome
        self.welcomedAt = welcomedAt
    }

    /// A link over `connection`, whose handshake is done: `welcome` is what the coordinator
    /// said when it accepted it. Starts reading and sending heartbeats every `heartbeat` (none
    /// when nil). `onPush` gets unasked messages; `onEnd` runs once when the link ends, with the
    /// link and why.
    static func started(
        over connection: AsyncMessageConnection, welcome: Welcome, heartbeat: Duration?,
        onPush: @escaping @Sendable (WireMessage) -> Void, onEnd: @escaping @Sendable (ClientLink, String) -> Void
    ) -> ClientLink {
        let link = ClientLink(connection: connection, welcome: welcome, welcomedAt: .now)
        link.start(heartbeat: heartbeat, onPush: onPush, onEnd: onEnd)
        return link
    }

    /// Sends the message `make` builds with a fresh id and waits for the answer with that id.
    /// Cancelling the task ends the wait at once and tells the coordinator.
    func exchange(_ make: (MessageID) -> WireMessage) async -> Answer {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let message = make(id)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Answer, Never>) in
                let early = state.withLock { state -> Answer? in
                    if let ended = state.ended { return .lost(reason: ended, sent: false) }
                    if state.phase[id] == .cancelledEarly {
                        state.phase[id] = nil
                        return .cancelled
                    }
                    state.pending[id] = continuation
                    state.phase[id] = .queued
                    return nil
                }
                if let early {
                    continuation.resume(returning: early)
                    return
                }
                Task { await self.send(message, id: id) }
            }
        } onCancel: {
            let (continuation, cancelNow) = state.withLock { state in
                let continuation = state.pending.removeValue(forKey: id)
                let sent = state.phase[id] == .sent
                state.phase[id] = sent ? nil : .cancelledEarly
                return (continuation, sent)
            }
            continuation?.resume(returning: .cancelled)
            if cancelNow { Task { try? await connection.send(.cancel(CancelMessage(id: id))) } }
        }
    }

    /// Hands the message of exchange `id` to the connection, unless it was cancelled first;
    /// sends a `cancel` after it if the exchange was cancelled meanwhile.
    private func send(_ message: WireMessage, id: MessageID) async {
        let skip = state.withLock { state in
            guard state.phase[id] == .cancelledEarly else { return false }
            state.phase[id] = nil
            return true
        }
        if skip { return }
        do {
            try await connection.send(message)
        } catch {
            // A message that cannot be encoded or sent never reached the coordinator.
            let continuation = state.withLock { state in
                state.phase[id] = nil
                return state.pending.removeValue(forKey: id)
            }
            let answer: Answer = error is FrameError ? .unsendable(reason: "\(error)") : .lost(reason: "\(error)", sent: false)
            continuation?.resume(returning: answer)
            return
        }
        let cancelNow = state.withLock { state -> Bool in
            if state.phase[id] == .cancelledEarly {
                state.phase[id] = nil
                return true
            }
            if state.pending[id] != nil { state.phase[id] = .sent }
            return false
        }
        if cancelNow { try? await connection.send(.cancel(CancelMessage(id: id))) }
    }

    /// Closes the connection and waits until the link has ended; exchanges still waiting end
    /// with `lost`.
    func close() async {
        connection.close()
        for task in tasks.withLock({ $0 }) { await task.value }
    }

    /// Closes the connection without waiting (from a deinit).
    func closeSoon() {
        connection.close()
    }

    private func start(
        heartbeat: Duration?, onPush: @escaping @Sendable (WireMessage) -> Void,
        onEnd: @escaping @Sendable (ClientLink, String) -> Void
    ) {
        let reader = Task(executorPreference: connection.loop) { [self] in
            var end = "the coordinator closed the connection"
            do {
                while let message = try await connection.nextMessage() {
                    state.withLock { $0.lastHeard = .now }
                    route(message, onPush: onPush, end: &end)
                }
            } catch {
                end = "\(error)"
            }
            finish(state.withLock { $0.closeReason } ?? end, onEnd: onEnd)
        }
        var started = [reader]
        if let heartbeat, heartbeat > .zero {
            started.append(Task { [self] in await beat(every: heartbeat) })
        }
        tasks.withLock { $0 = started }
    }

    /// Delivers one message: an answer to its exchange, a protocol error noted as the reason
    /// the link will end, anything else unasked to `onPush`.
    private func route(_ message: WireMessage, onPush: @Sendable (WireMessage) -> Void, end: inout String) {
        switch message {
        case .error(let error):
            end = "protocol error: \(error.code.rawValue): \(error.message)"
        case .response, .failure, .result, .pong:
            guard let id = message.id else { return }
            let continuation = state.withLock { state in
                state.phase[id] = nil
                return state.pending.removeValue(forKey: id)
            }
            // An answer nobody waits for any more (cancelled, timed out) is dropped.
            continuation?.resume(returning: .message(message))
        default:
            onPush(message)
        }
    }

    /// Ends every waiting exchange and reports the end once.
    private func finish(_ reason: String, onEnd: @Sendable (ClientLink, String) -> Void) {
        let waiting = state.withLock { state in
            state.ended = reason
            let waiting = state.pending.map { ($0.value, state.phase[$0.key] == .sent) }
            state.pending.removeAll()
            state.phase.removeAll()
            return waiting
        }
        for (continuation, sent) in waiting { continuation.resume(returning: .lost(reason: reason, sent: sent)) }
        for task in tasks.withLock({ $0 }).dropFirst() { task.cancel() }
        onEnd(self, reason)
    }

    /// Whether the link has ended (its exchanges end with `lost` at once).
    var isEnded: Bool { state.withLock { $0.ended != nil } }

    /// Pings when nothing was heard for `interval`; closes the link when nothing was heard for
    /// three intervals (the peer is dead or stuck).
    private func beat(every interval: Duration) async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: interval) } catch { return }
            let (silence, ended) = state.withLock { (ContinuousClock.now - $0.lastHeard, $0.ended != nil) }
            if ended { return }
            if silence >= interval * 3 {
                state.withLock { $0.closeReason = "the coordinator answered no heartbeat for \(silence)" }
                closeSoon()
                return
            }
            if silence >= interval { try? await connection.send(.ping(PingMessage())) }
        }
    }
}
