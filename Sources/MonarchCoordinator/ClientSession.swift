import DequeModule
import Logging
import Monarch
import MonarchLoop
import MonarchTransport
import MonarchWire

/// The coordinator's side of one client connection: each request waits for its trip (an admin
/// exchange runs as its own task), answers go back in whatever order they are ready, a `cancel`
/// reaches the request it names, and a client that goes away takes its requests with it.
///
/// A client is held to its share, and its answers to what it reads:
/// - at most ``Configuration/Limits/inFlightPerClient`` exchanges are in flight or waiting to
///   start on the connection, and ``Configuration/Limits/inFlight`` in all; more are answered
///   `overloaded` at once;
/// - exchanges start only while the answers already queued for the client are under the
///   connection's high watermark, and only as many at once as answers the size of its recent ones
///   fit in ``Configuration/Limits/clientQueueBytes`` (before the first answer, as many as
///   frames of the largest size fit): a client pipelining a hundred large reads gets them as
///   fast as it takes them, and one that takes none holds a bounded amount;
/// - while answers wait unread above the high watermark, nothing more is read from the client
///   (the kernel, then the client, waits); a request's deadline counts from its arrival, and
///   one still waiting for its turn when it passes is answered `deadlineExceeded` then
///   (within a second);
/// - while more than ``Configuration/Limits/clientQueueBytes`` of answers wait unread, its
///   responses are answered `overloaded` instead (the queue stays within it, a frame and a
///   failure per request), and a client that takes none of its answers for
///   ``Configuration/Limits/idleTimeout`` is not reading at all: its connection is closed.
///
/// The connection is any ``MessageConnection``: frames on a socket, or an in-memory pair
/// (``Coordinator/attachInMemoryClient(token:)``); the rules above hold on both.
///
/// It runs on ``CoordinatorActor``, as the coordinator does, which calls it directly; the
/// connection's callbacks (`@Sendable`) enter through `assumeIsolated`, checked when they run
/// (a call off the loop stops the process).
@CoordinatorActor
final class ClientSession {
    /// The coordinator's serial number for this client (its turn in the queues).
    nonisolated let id: Int
    /// The client's connection: framed on a socket, or in memory.
    nonisolated let connection: any MessageConnection
    /// The coordinator the client is connected to.
    nonisolated unowned let coordinator: Coordinator
    /// What an exchange does once it starts.
    private enum Work {
        /// A request: planned and sent on its trip (or joining one) from the loop.
        case request(RequestMessage)
        /// An admin exchange, run as a task.
        case exchange(@Sendable (ContinuousClock.Instant) async -> WireMessage)
    }

    /// An exchange under way.
    private enum Call {
        /// A request waiting for its trip, as the flight table's waiter number.
        case request(waiter: Int)
        /// An admin exchange's task.
        case exchange(Task<Void, Never>)
    }

    private var calls: [MessageID: Call] = [:]
    /// An exchange read and not started yet.
    private struct Waiting {
        var id: MessageID
        var work: Work
        var arrived: ContinuousClock.Instant
        /// When a request's deadline passes (counted from its arrival); nil for an admin
        /// exchange, or a request that its start refuses at once.
        var expires: ContinuousClock.Instant?
    }

    /// Exchanges read and not started yet, in arrival order.
    private var waiting: Deque<Waiting> = []
    /// The ids of ``waiting``, for the duplicate check and cancels.
    private var waitingIDs: Set<MessageID> = []
    /// The sizes of the last answers sent, in bytes: the largest of them sizes the window.
    private var recentAnswers: Deque<Int> = []
    /// The largest of ``recentAnswers``, nil before the first answer.
    private var largestRecentAnswer: Int?
    /// How many answer sizes ``recentAnswers`` keeps.
    private static let answersRemembered = 32
    /// When a frame last arrived (or the last call ended).
    private var lastActivity: ContinuousClock.Instant
    /// `changed` events waiting for the client to take what it was sent, and how far behind
    /// it is (see ``ClientSession+Watches``).
    var watchBacklog: WatchBacklog

    /// What the client may do, as its hello's secret decided.
    nonisolated let role: ClientRole
    /// The client's TCP peer address; nil on a Unix socket.
    nonisolated let peer: String?
    /// The invalidations the client may still make now (``Configuration/Limits/invalidationsPerSecond``).
    var invalidationBudget: TokenBucket

    init(id: Int, connection: any MessageConnection, role: ClientRole, peer: String?, coordinator: Coordinator) {
        self.id = id
        self.connection = connection
        self.role = role
        self.peer = peer
        self.coordinator = coordinator
        self.lastActivity = coordinator.clock.now
        let rate = coordinator.limits.invalidationsPerSecond
        self.invalidationBudget = TokenBucket(ratePerSecond: rate, burst: rate, clock: coordinator.clock)
        self.watchBacklog = WatchBacklog(eventsPerWatch: coordinator.limits.watchEvents)
        connection.onMessage = { [unowned self] message in CoordinatorActor.assumeIsolated { received(message) } }
        connection.whenEnded { [self] _ in CoordinatorActor.assumeIsolated { ended() } }
        connection.onWritabilityChanged = { [unowned self] writable in
            CoordinatorActor.assumeIsolated { writabilityChanged(to: writable) }
        }
    }

    /// Back-pressure: no new requests are read while answers wait to be taken; waiting
    /// exchanges start once they were.
    private func writabilityChanged(to writable: Bool) {
        if writable {
            // Its waiting `changed` events go out over the next loop turns.
            if !watchBacklog.outbox.isEmpty { coordinator.watchEventsReady(for: id) }
            connection.resume()
            startWaiting()
        } else {
            connection.pause()
        }
    }

    /// Exchanges of this client in flight or waiting to start.
    var callsInFlight: Int { calls.count + waiting.count }

    /// How many exchanges may run at once now: as many as answers the size of the largest of
    /// the recent ones fit in the client's queue (before any, as many as frames of the largest
    /// size fit), within its share.
    private var window: Int {
        let limits = coordinator.limits
        let largest = largestRecentAnswer ?? limits.maxFrameBytes
        return max(1, min(limits.inFlightPerClient, limits.clientQueueBytes / max(largest, 1)))
    }

    /// Whether the client has nothing in flight, holds no watch (a watcher may rightly wait in
    /// silence for changes), and has sent nothing for `timeout` before `now` (on the
    /// coordinator's clock).
    func isIdle(now: ContinuousClock.Instant, timeout: Duration) -> Bool {
        calls.isEmpty && waiting.isEmpty && now - lastActivity > timeout && connection.isOpen
            && coordinator.watches.count(of: id) == 0
    }

    /// The answers queued for the client when ``isStalled(now:timeout:)`` last looked, and
    /// since when none of them has been taken.
    private var lastQueued = 0
    private var stalledSince: ContinuousClock.Instant?

    /// Whether answers have waited for the client for `timeout` without it taking any: it
    /// is not reading. Called once a second or so.
    func isStalled(now: ContinuousClock.Instant, timeout: Duration) -> Bool {
        // What its watches hold is counted afresh too: the kernel may have taken some.
        rechargeWatchBytes()
        let queued = connection.queuedWriteBytes
        defer { lastQueued = queued }
        guard queued > 0, queued >= lastQueued else {
            stalledSince = nil
            return false
        }
        if stalledSince == nil { stalledSince = now }
        return now - stalledSince! > timeout
    }

    private func received(_ message: WireMessage) {
        lastActivity = coordinator.clock.now
        if let refusal = refusal(of: message) {
            send(.failure(refusal))
            return
        }
        switch message {
        case .request(let request):
            startCall(request.id, "request", .request(request))
        case .cancel(let cancel):
            if waitingIDs.contains(cancel.id) {
                // Not started: answered at once, never started.
                waitingIDs.remove(cancel.id)
                waiting.removeAll { $0.id == cancel.id }
                coordinator.exchangeFinished()
                send(.failure(FailureMessage(id: cancel.id, error: ChainError(.cancelled, "the request was cancelled").detail)))
            } else if let call = calls[cancel.id] {
                stop(call)
            }
        case .ping(let ping):
            send(.pong(PongMessage(id: ping.id)))
        case .pong:
            // A reply to no exchange of ours: ignored (protocol section 5).
            break
        case .status(let status):
            if coordinator.hasSharedCacheStore {
                // The cache workers are asked for their store's state: an exchange like the others.
                startCall(status.id, "status", .exchange { [self] _ in
                    .result(ResultMessage(id: status.id, report: await coordinator.statusReportWithStores()))
                })
            } else {
                send(.result(ResultMessage(id: status.id, report: coordinator.statusReport())))
            }
        case .scale(let admin):
            startCall(admin.id, "scale", .exchange { [self] _ in await coordinator.scale(admin) })
        case .invalidate(let admin):
            startCall(admin.id, "invalidate", .exchange { [self] _ in await coordinator.invalidate(admin) })
        case .watch(let watch):
            send(coordinator.watch(watch, for: id))
        case .unwatch(let unwatch):
            send(coordinator.unwatch(unwatch, for: id))
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

    /// Queues `work` as call `id` and starts what may start (see the type's rules). An id
    /// already in flight is the protocol error of section 5; a call past the client's share is
    /// answered `overloaded` at once.
    private func startCall(_ id: MessageID, _ what: String, _ work: Work) {
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
        guard coordinator.admitExchange() else {
            send(.failure(FailureMessage(id: id, error: ChainError(
                .overloaded, "the coordinator has \(coordinator.limits.inFlight) requests in flight (limits.inFlight); try again later"
            ).detail)))
            return
        }
        if waiting.isEmpty, !starting, mayStart {
            // Nothing waits before it: it starts now, without queueing.
            starting = true
            start(id, work, arrived: coordinator.clock.now)
            starting = false
        } else {
            let arrived = coordinator.clock.now
            var expires: ContinuousClock.Instant?
            if case .request(let request) = work, let deadline = coordinator.deadline(of: request) { expires = arrived + deadline }
            waiting.append(Waiting(id: id, work: work, arrived: arrived, expires: expires))
            waitingIDs.insert(id)
        }
        startWaiting()
    }

    /// Whether another exchange may start: the client takes its answers and the window has room.
    private var mayStart: Bool {
        connection.isOpen && connection.isWritable && calls.count < window
    }

    /// Whether ``startWaiting()`` is running: an exchange answered while it starts returns to it.
    private var starting = false

    /// Starts waiting exchanges while the client takes its answers and the window has room.
    private func startWaiting() {
        guard !starting else { return }
        starting = true
        defer { starting = false }
        while let next = waiting.first, mayStart {
            waiting.removeFirst()
            waitingIDs.remove(next.id)
            start(next.id, next.work, arrived: next.arrived)
        }
    }

    /// Answers the waiting requests whose deadline has passed by `now` with `deadlineExceeded`,
    /// as their start would: none waits for its turn past its deadline, holding its share of
    /// the client's and the coordinator's requests in flight. Called once a second or so.
    func expireWaiting(now: ContinuousClock.Instant) {
        func hasExpired(_ entry: Waiting) -> Bool { entry.expires.map { $0 <= now } ?? false }
        guard !starting, waiting.contains(where: hasExpired) else { return }
        let expired = waiting.filter(hasExpired)
        waiting.removeAll(where: hasExpired)
        for entry in expired { waitingIDs.remove(entry.id) }
        starting = true
        for entry in expired { start(entry.id, entry.work, arrived: entry.arrived) }
        starting = false
        startWaiting()
    }

    /// Starts call `id`, which arrived at `arrived`. Only while ``starting``: an answer given
    /// before this returns comes back to ``finish(_:with:)``, which leaves the waiting
    /// exchanges to the loop under way.
    private func start(_ id: MessageID, _ work: Work, arrived: ContinuousClock.Instant) {
        switch work {
        case .request(let request):
            // Answered on the loop, in the session's isolation: no task, no hop. A request
            // refused before its trip is answered at once, and never becomes a call.
            let waiter = coordinator.answer(request, for: self.id, arrived: arrived) { [unowned self] reply in
                finish(id, with: reply)
            }
            if let waiter { calls[id] = .request(waiter: waiter) }
        case .exchange(let answer):
            // The exchange runs outside the session's isolation, on the loop, and comes back
            // into it to answer.
            calls[id] = .exchange(Task(executorPreference: connection.loop) { [self] in
                let message = await answer(arrived)
                await finish(id, with: .message(message))
            })
        }
    }

    /// Ends call `call` early: a request is answered `cancelled` at once, an exchange's task
    /// is cancelled.
    private func stop(_ call: Call) {
        switch call {
        case .request(let waiter): coordinator.flights.cancel(waiter)
        case .exchange(let task): task.cancel()
        }
    }

    /// Sends the answer of call `id` (on the loop: from its task, or from its trip's end).
    private func finish(_ id: MessageID, with reply: ClientAnswer) {
        calls[id] = nil
        lastActivity = coordinator.clock.now
        coordinator.exchangeFinished()
        send(reply)
        startWaiting()
    }

    private func unsupported(_ id: MessageID, _ what: String) -> WireMessage {
        .failure(FailureMessage(id: id, error: ChainError(.invalidRequest, "this coordinator does not support \(what) yet").detail))
    }

    /// Sends `message` (see ``send(_:)-(ClientAnswer)``).
    private func send(_ message: WireMessage) {
        send(.message(message))
    }

    /// Sends `answer` if the client is still there; an answer too large for a frame becomes a
    /// `responseTooLarge` failure. While more than ``Configuration/Limits/clientQueueBytes`` of
    /// answers wait unread, a response becomes an `overloaded` failure instead: requests started
    /// under a window sized by small answers may come back large, and the client keeps its
    /// connection and its other answers while the queue stays bounded (by the queue, a frame,
    /// and a failure per request in flight). A client that takes nothing at all is closed by
    /// the stall check (``isStalled(now:timeout:)``).
    private func send(_ answer: ClientAnswer) {
        guard connection.isOpen else { return }
        let before = connection.queuedWriteBytes
        var answer = answer
        let limit = coordinator.limits.clientQueueBytes
        if before > limit, answer.isResponse, let id = answer.id {
            coordinator.overloadedRequests += 1
            coordinator.peerLog.log(
                .warning, "client \(self.id): \(before) bytes of answers wait unread, more than limits.clientQueue (\(limit)); answering overloaded",
                to: coordinator.logger)
            answer = .message(.failure(FailureMessage(id: id, error: ChainError(
                .overloaded, "\(before) bytes of answers wait unread on this connection, more than limits.clientQueue (\(limit)): read them, or ask for less at once"
            ).detail)))
        }
        do {
            switch answer {
            case .message(let message): try connection.send(message)
            case .prepared(let prepared, let id, let ageMs): try connection.send(prepared, answering: id, ageMs: ageMs)
            case .relayedHit(let hit): try connection.send(.response(hit.message))
            }
            let size = max(connection.queuedWriteBytes - before, 0)
            recentAnswers.append(size)
            largestRecentAnswer = max(largestRecentAnswer ?? size, size)
            if recentAnswers.count > Self.answersRemembered, recentAnswers.removeFirst() == largestRecentAnswer {
                largestRecentAnswer = recentAnswers.max()
            }
        } catch {
            guard let id = answer.id else { return }
            let failure = FailureMessage(id: id, error: ChainError(
                .responseTooLarge, "the answer does not fit in a frame: \(error)").detail)
            try? connection.send(.failure(failure))
        }
    }

    private func ended() {
        for call in calls.values { stop(call) }
        calls.removeAll()
        for _ in waiting { coordinator.exchangeFinished() }
        waiting.removeAll()
        waitingIDs.removeAll()
        releaseWatchBytes()
        coordinator.clientLeft(self)
    }
}
