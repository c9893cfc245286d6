import Logging
import Monarch
import MonarchLoop
import MonarchTransport
import MonarchWire

/// The coordinator's side of one registered worker's connection: requests go out with ids of
/// the coordinator's own, answers come back matched by id. At most ``capacity`` requests are
/// out at once (the pool queues the rest). It runs on ``CoordinatorActor``, as its pool and
/// the coordinator do; the connection's callbacks enter through `assumeIsolated`.
@CoordinatorActor
final class WorkerSession {
    /// How one forwarded request ended.
    enum Reply: Sendable {
        /// The worker answered (a response, a miss or a failure).
        case answered(ProviderOutcome)
        /// The worker was lost before it answered; the request may be tried elsewhere.
        case lost(String)
    }

    /// Who waits for a request's answer: a task (``forward(_:host:)``), or a callback on the
    /// loop (``send(_:host:reply:)``).
    private enum Waiter {
        case task(CheckedContinuation<Reply, Never>)
        case callback(@CoordinatorActor (Reply) -> Void)
    }

    /// What ``send(_:host:reply:)`` did.
    enum Sent {
        /// The request went out as this id; its reply comes to the callback.
        case waiting(MessageID)
        /// It did not go out, for this reply (the callback is not called).
        case replied(Reply)
    }

    /// What changes while the worker is connected.
    private struct State {
        var nextID: MessageID = 1
        /// Callers waiting for an answer, by request id.
        var waiting: [MessageID: Waiter] = [:]
        /// Requests sent and not yet answered by the worker, cancelled ones included: its load.
        var outstanding: Set<MessageID> = []
        /// Requests cancelled and not answered yet, with when the cancel went out: past
        /// ``cancelGrace`` they are forgotten, so a worker that never answers them does not keep
        /// their slots (nor the table) for ever.
        var cancelled: [MessageID: ContinuousClock.Instant] = [:]
        /// Slots promised to callers of the pool that have not sent their request yet.
        var reserved = 0
        /// Requests out and slots promised, by upstream host (`host:port`, `""` for none).
        var byHost: [String: Int] = [:]
        /// The upstream host of each request out.
        var hostOf: [MessageID: String] = [:]
        var forwarded = 0
        var answered = 0
        var failures = 0
        var forgotten = 0
        var lateAnswers = 0
        var lostReason: String?
        var isDraining = false
        var isUnresponsive = false
        var lastHeard: ContinuousClock.Instant
        /// Callers of ``exchange(timeoutMs:_:)`` waiting for a `result` or `failure`, by id.
        var exchanges: [MessageID: CheckedContinuation<WireMessage?, Never>] = [:]
        var onLost: ((WorkerSession) -> Void)?
        var onSharedChange: ((SharedChangeMessage) -> Void)?
        var onSlotFreed: ((WorkerSession) -> Void)?

        /// A fresh message id.
        mutating func takeID() -> MessageID {
            defer { nextID += 1 }
            return nextID
        }

        /// Frees the host slot a request or a promise held.
        mutating func release(host: String) {
            let left = byHost[host, default: 1] - 1
            byHost[host] = left > 0 ? left : nil
        }
    }

    /// The coordinator's id for the worker (`bundle-1`).
    let id: String
    /// What the worker said in its `hello`.
    let hello: Hello
    /// The connection to the worker: frames on a socket, or an in-memory pair's end
    /// (``Coordinator/attachInMemoryWorker(_:)``).
    let connection: any MessageConnection
    private let logger: Logger
    private var state: State
    /// Where the session reads the time: the coordinator's clock.
    let clock: MonotonicClock
    /// When it registered.
    let registeredAt: ContinuousClock.Instant

    /// How many requests a worker that announces no `capacity` in its hello runs at once.
    nonisolated static let defaultCapacity = 64
    /// How long a cancelled request may stay unanswered before it is forgotten.
    nonisolated static let cancelGrace: Duration = .seconds(10)

    /// How many requests the worker runs at once: its hello's `capacity`, else ``defaultCapacity``.
    let capacity: Int
    /// How many requests for one upstream host it runs at once: its hello's `hostCapacity`,
    /// else ``capacity``.
    let hostCapacity: Int

    /// The session of worker `id`, registered with `hello` on `connection`, reading the time
    /// on `clock`.
    init(id: String, hello: Hello, connection: any MessageConnection, logger: Logger, clock: MonotonicClock) {
        self.id = id
        self.hello = hello
        self.connection = connection
        self.logger = logger
        self.clock = clock
        let now = clock.now
        self.registeredAt = now
        self.state = State(lastHeard: now)
        self.shardName = hello.name ?? id
        self.capacity = hello.capacity ?? Self.defaultCapacity
        self.hostCapacity = min(hello.hostCapacity ?? capacity, capacity)
        connection.onMessage = { [unowned self] message in CoordinatorActor.assumeIsolated { received(message) } }
        connection.whenEnded { [self] end in CoordinatorActor.assumeIsolated { ended(end) } }
    }

    // MARK: - What the pool, the coordinator and status read

    /// Requests sent and not yet answered by the worker, cancelled ones included: its load.
    var outstanding: Set<MessageID> { state.outstanding }
    /// Slots promised to callers of the pool that have not sent their request yet.
    var reserved: Int { state.reserved }
    /// Requests forwarded so far.
    var forwarded: Int { state.forwarded }
    /// Answers received so far.
    var answered: Int { state.answered }
    /// Of those, failures.
    var failures: Int { state.failures }
    /// Cancelled requests the worker never answered, forgotten after ``cancelGrace``.
    var forgotten: Int { state.forgotten }
    /// Answers that came for requests no longer waited for (forgotten, or late), ignored.
    var lateAnswers: Int { state.lateAnswers }
    /// Why the worker is out of rotation for good: its connection ended, or it stopped
    /// answering pings.
    var lostReason: String? { state.lostReason }
    /// Whether it is being drained (scale-down): it takes no new requests and finishes those it has.
    var isDraining: Bool {
        get { state.isDraining }
        set { state.isDraining = newValue }
    }
    /// Whether it stopped answering pings (it is being killed or disconnected).
    var isUnresponsive: Bool { state.isUnresponsive }
    /// When anything last arrived from the worker.
    var lastHeard: ContinuousClock.Instant { state.lastHeard }
    /// Called once when the connection ends.
    var onLost: ((WorkerSession) -> Void)? {
        get { state.onLost }
        set { state.onLost = newValue }
    }
    /// Called with each change to the shared store another coordinator made, as the worker
    /// forwarded it; set only for a worker of a cache pool (``PoolRole/cache``): a worker
    /// without it that sends one breaks the protocol.
    var onSharedChange: ((SharedChangeMessage) -> Void)? {
        get { state.onSharedChange }
        set { state.onSharedChange = newValue }
    }
    /// Called when a slot frees up (an answer came, or a cancelled request was forgotten).
    var onSlotFreed: ((WorkerSession) -> Void)? {
        get { state.onSlotFreed }
        set { state.onSlotFreed = newValue }
    }

    /// The worker's kind.
    var kind: String { hello.kind ?? "worker" }

    /// Requests out and slots promised.
    var load: Int { state.outstanding.count + state.reserved }

    /// Whether it takes new requests: connected, answering, not draining.
    var isServing: Bool { state.lostReason == nil && !state.isDraining }

    /// Whether another request may be sent now.
    var hasRoom: Bool { isServing && load < capacity }

    /// Whether another request for upstream `host` may be sent now.
    func hasRoom(forHost host: String) -> Bool {
        hasRoom && state.byHost[host, default: 0] < hostCapacity
    }

    /// Promises a slot to a request for `host`, which ``forward(_:host:)`` then takes.
    func reserve(host: String) {
        state.reserved += 1
        state.byHost[host, default: 0] += 1
    }

    /// Whether it has nothing left to answer (requests or admin exchanges), and no slot
    /// promised to a request about to be sent.
    var isIdle: Bool { state.outstanding.isEmpty && state.exchanges.isEmpty && state.reserved == 0 }

    /// Sends a heartbeat `ping`.
    func ping() {
        guard lostReason == nil else { return }
        let id = state.takeID()
        try? connection.send(.ping(PingMessage(id: id)))
    }

    /// Takes the worker out of rotation because it stopped answering: every request waiting for
    /// it is released as lost (idempotent ones move to another worker), every admin exchange
    /// ends without an answer. The connection stays until the caller kills the process or
    /// closes it.
    func declareUnresponsive(_ reason: String) {
        guard lostReason == nil else { return }
        state.isUnresponsive = true
        strand(reason)
    }

    /// Forwards `request` (for upstream `host`, in the slot ``reserve(host:)`` promised) and
    /// waits for the worker's answer. A cancelled caller gets a `cancelled` failure at once and
    /// the worker gets a `cancel` (nothing, when it was cancelled before it was sent). Runs on
    /// the loop.
    func forward(_ request: Request, host: String) async -> Reply {
        state.reserved -= 1
        let id = state.takeID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // Sent once its answer has somewhere to go.
                if let lostReason {
                    state.release(host: host)
                    return continuation.resume(returning: .lost(lostReason))
                }
                if Task.isCancelled {
                    // Cancelled while it waited for the slot: the worker never sees it, and the slot
                    // goes to the next request at once rather than when the worker answers a cancel.
                    state.release(host: host)
                    onSlotFreed?(self)
                    return continuation.resume(returning: .answered(.failure(.cancelled)))
                }
                if case .failure(let failure) = transmit(request, host: host, as: id) {
                    return continuation.resume(returning: .answered(.failure(failure)))
                }
                state.waiting[id] = .task(continuation)
            }
        } onCancel: {
            connection.loop.execute { [self] in CoordinatorActor.assumeIsolated { cancelWaiting(id) } }
        }
    }

    /// Answers the task waiting for request `id` `cancelled`, and tells the worker.
    private func cancelWaiting(_ id: MessageID) {
        guard case .task(let continuation)? = state.waiting.removeValue(forKey: id) else { return }
        cancel(id)
        continuation.resume(returning: .answered(.failure(.cancelled)))
    }

    /// Forwards `request` (for upstream `host`, in the slot ``reserve(host:)`` promised) from
    /// the loop, without a task: the worker's answer, or its loss, goes to `reply` on the loop,
    /// never before this returns; ``abandon(_:)`` withdraws it. A request that cannot go out
    /// (the worker is lost, or the request does not fit in a frame) is replied to in the
    /// return value instead.
    func send(_ request: Request, host: String, reply: @escaping @CoordinatorActor (Reply) -> Void) -> Sent {
        state.reserved -= 1
        if let lostReason {
            state.release(host: host)
            return .replied(.lost(lostReason))
        }
        let id = state.takeID()
        switch transmit(request, host: host, as: id) {
        case .success:
            state.waiting[id] = .callback(reply)
            return .waiting(id)
        case .failure(let failure):
            return .replied(.answered(.failure(failure)))
        }
    }

    /// Sends `request` (for upstream `host`) to the worker as `id`, in the slot taken, where it
    /// is then outstanding; `requestTooLarge` when it does not fit in a frame (the slot is then
    /// given back).
    private func transmit(_ request: Request, host: String, as id: MessageID) -> Result<Void, ProviderFailure> {
        do {
            try connection.send(.request(request.message(id: id)))
        } catch {
            state.release(host: host)
            onSlotFreed?(self)
            return .failure(ProviderFailure(code: .requestTooLarge, message: "\(error)"))
        }
        state.outstanding.insert(id)
        state.hostOf[id] = host
        state.forwarded += 1
        return .success(())
    }

    /// Withdraws request `id` sent by ``send(_:host:reply:)``: its callback is not called, and
    /// the worker is asked to stop working on it (its slot frees up when it answers, as for
    /// any cancelled request). Nothing when it was answered already.
    func abandon(_ id: MessageID) {
        guard state.waiting.removeValue(forKey: id) != nil else { return }
        cancel(id)
    }

    /// The name keys are sharded on: the worker's own (stable across restarts, so a restarted
    /// cache worker gets its keys back; no two connected workers of a kind share one), else its id.
    let shardName: String

    /// How long a worker may take to answer an admin message before the exchange is given up.
    nonisolated static let exchangeTimeoutMs: UInt64 = 10_000

    /// Sends the admin message `make` builds with a fresh id (`store`, `invalidate`, `status`)
    /// and waits for the worker's `result` or `failure`; nil when the worker is lost first, the
    /// message cannot be sent, or no answer comes within `timeoutMs`. Runs on the loop.
    func exchange(timeoutMs: UInt64 = exchangeTimeoutMs, _ make: @Sendable (MessageID) -> WireMessage) async -> WireMessage? {
        guard lostReason == nil else { return nil }
        let timer = try? LoopTimer(on: connection.loop)
        defer { timer?.close() }
        return await withCheckedContinuation { continuation in
            // Sent once its answer has somewhere to go.
            let id = state.takeID()
            guard lostReason == nil, (try? connection.send(make(id))) != nil else { return continuation.resume(returning: nil) }
            state.exchanges[id] = continuation
            timer?.start(afterMs: timeoutMs) { [self] in CoordinatorActor.assumeIsolated { exchangeTimedOut(id, after: timeoutMs) } }
        }
    }

    /// Gives up waiting for the answer to exchange `id`, unanswered after `timeoutMs`.
    private func exchangeTimedOut(_ id: MessageID, after timeoutMs: UInt64) {
        guard let waiting = state.exchanges.removeValue(forKey: id) else { return }
        logger.warning("worker \(self.id) did not answer exchange \(id) within \(timeoutMs) ms")
        waiting.resume(returning: nil)
    }

    /// Records why the worker is out of rotation and releases everything waiting for it: its
    /// requests as lost (they may be tried elsewhere), its exchanges without an answer.
    private func strand(_ reason: String) {
        let (stranded, unanswered) = { (state: inout State) in
            state.lostReason = reason
            let stranded = state.waiting
            let unanswered = state.exchanges
            state.waiting.removeAll()
            state.outstanding.removeAll()
            state.cancelled.removeAll()
            for host in state.hostOf.values { state.release(host: host) }
            state.hostOf.removeAll()
            state.exchanges.removeAll()
            return (stranded, unanswered)
        }(&state)
        if !stranded.isEmpty {
            logger.warning("\(reason) with \(stranded.count) request(s) in flight; retrying them")
        } else {
            logger.info("\(reason)")
        }
        for waiter in stranded.values {
            switch waiter {
            case .task(let continuation): continuation.resume(returning: .lost(reason))
            // On a later turn, as a task would hear it: the callback may send elsewhere, and the
            // pool is still taking this worker out of rotation.
            case .callback(let reply): connection.loop.execute { CoordinatorActor.assumeIsolated { reply(.lost(reason)) } }
            }
        }
        for continuation in unanswered.values { continuation.resume(returning: nil) }
    }

    /// Asks the worker to stop working on request `id`; its final answer is still expected,
    /// for ``cancelGrace``.
    private func cancel(_ id: MessageID) {
        state.cancelled[id] = clock.now
        try? connection.send(.cancel(CancelMessage(id: id)))
    }

    /// Forgets the cancelled requests the worker has not answered within ``cancelGrace`` of
    /// their cancel, by `now` (on ``clock``): their slots free up, and an answer that still
    /// comes is ignored.
    func forgetUnansweredCancellations(now: ContinuousClock.Instant) {
        let overdue = state.cancelled.filter { now - $0.value > Self.cancelGrace }.keys
        guard !overdue.isEmpty else { return }
        for id in overdue {
            state.cancelled[id] = nil
            state.outstanding.remove(id)
            if let host = state.hostOf.removeValue(forKey: id) { state.release(host: host) }
        }
        state.forgotten += overdue.count
        logger.warning("worker \(id) did not answer \(overdue.count) cancelled request(s) within \(Self.cancelGrace); forgetting them")
        onSlotFreed?(self)
    }

    private func received(_ message: WireMessage) {
        state.lastHeard = clock.now
        // An unresponsive worker's late words change nothing: its requests went elsewhere.
        if isUnresponsive { return }
        if let id = message.id, let exchange = state.exchanges.removeValue(forKey: id) {
            switch message {
            case .result, .failure: return exchange.resume(returning: message)
            default: state.exchanges[id] = exchange
            }
        }
        let outcome: ProviderOutcome
        switch message {
        case .response(let response): outcome = .response(Response(response))
        case .miss(let miss): outcome = .miss(reason: miss.reason)
        case .failure(let failure):
            outcome = .failure(ProviderFailure(code: failure.error.code, message: failure.error.message))
        case .pong:
            return
        case .result(let result):
            // An admin exchange given up on (timed out) may still be answered: ignored.
            guard result.id < state.nextID else {
                connection.fail(ProtocolError(.unexpectedMessage, "no exchange \(result.id) is under way on this connection", id: result.id))
                return
            }
            state.lateAnswers += 1
            return
        case .ping(let ping):
            // Workers may ping too (protocol section 1), and every ping is answered.
            try? connection.send(.pong(PongMessage(id: ping.id)))
            return
        case .sharedChange(let change):
            guard let onSharedChange else {
                connection.fail(ProtocolError(.unexpectedMessage, "a \(kind) worker keeps no shared cache; only cache workers send sharedChange"))
                return
            }
            onSharedChange(change)
            return
        case .error(let error):
            logger.error("worker \(id) reported a protocol error: \(error.code.rawValue): \(LogText.sanitized(error.message))")
            return
        default:
            connection.fail(ProtocolError(.unexpectedMessage, "a worker does not send \(message.type) messages"))
            return
        }
        let id = message.id!
        let waiter = { (state: inout State) -> Waiter?? in
            guard state.outstanding.remove(id) != nil else { return .none }
            state.cancelled[id] = nil
            if let host = state.hostOf.removeValue(forKey: id) { state.release(host: host) }
            state.answered += 1
            if case .failure = outcome { state.failures += 1 }
            return .some(state.waiting.removeValue(forKey: id))
        }(&state)
        guard let waiter else {
            // A reply to a request this side forgot (or answered twice): ignored (protocol
            // section 5); one to an id never sent is a protocol error.
            guard id < state.nextID else {
                connection.fail(ProtocolError(.unexpectedMessage, "no request \(id) is in flight on this connection", id: id))
                return
            }
            state.lateAnswers += 1
            return
        }
        switch waiter {
        case .task(let continuation)?:
            continuation.resume(returning: .answered(outcome))
            onSlotFreed?(self)
        case .callback(let reply)?:
            // The freed slot goes to the requests queued for it first, as it does when a task
            // waits (its continuation runs later).
            onSlotFreed?(self)
            reply(.answered(outcome))
        case nil:
            onSlotFreed?(self)
        }
    }

    private func ended(_ end: ConnectionEnd) {
        if lostReason == nil {
            strand("worker \(id) (pid \(hello.pid.map(String.init) ?? "?")) disconnected: \(end)")
        }
        let onLost = self.onLost
        state.onLost = nil
        state.onSlotFreed = nil
        state.onSharedChange = nil
        onLost?(self)
    }
}
