import Logging
import Monarch
import MonarchLoop
import MonarchWire

/// The coordinator's side of one registered worker's connection: requests go out with ids of
/// the coordinator's own, answers come back matched by id. At most ``capacity`` requests are
/// out at once (the pool queues the rest). Loop thread only.
final class WorkerSession: @unchecked Sendable {
    /// How one forwarded request ended.
    enum Reply: Sendable {
        /// The worker answered (a response, a miss or a failure).
        case answered(ProviderOutcome)
        /// The worker was lost before it answered; the request may be tried elsewhere.
        case lost(String)
    }

    /// The coordinator's id for the worker (`bundle-1`).
    let id: String
    /// What the worker said in its `hello`.
    let hello: Hello
    let connection: FrameConnection
    private let logger: Logger
    private var nextID: MessageID = 1
    /// Callers waiting for an answer, by request id.
    private var waiting: [MessageID: CheckedContinuation<Reply, Never>] = [:]
    /// Requests sent and not yet answered by the worker, cancelled ones included: its load.
    private(set) var outstanding: Set<MessageID> = []
    /// Requests cancelled and not answered yet, with when the cancel went out: past
    /// ``cancelGrace`` they are forgotten, so a worker that never answers them does not keep
    /// their slots (nor the table) for ever.
    private var cancelled: [MessageID: ContinuousClock.Instant] = [:]
    /// Slots promised to callers of the pool that have not sent their request yet.
    private(set) var reserved = 0
    /// Requests out and slots promised, by upstream host (`host:port`, `""` for none).
    private var byHost: [String: Int] = [:]
    /// The upstream host of each request out.
    private var hostOf: [MessageID: String] = [:]
    /// Requests forwarded so far.
    private(set) var forwarded = 0
    /// Answers received so far.
    private(set) var answered = 0
    /// Of those, failures.
    private(set) var failures = 0
    /// Cancelled requests the worker never answered, forgotten after ``cancelGrace``.
    private(set) var forgotten = 0
    /// Answers that came for requests no longer waited for (forgotten, or late), ignored.
    private(set) var lateAnswers = 0
    /// Why the worker is out of rotation for good: its connection ended, or it stopped
    /// answering pings.
    private(set) var lostReason: String?
    /// Whether it is being drained (scale-down): it takes no new requests and finishes those it has.
    var isDraining = false
    /// Whether it stopped answering pings (it is being killed or disconnected).
    private(set) var isUnresponsive = false
    /// When anything last arrived from the worker.
    private(set) var lastHeard = ContinuousClock.now
    /// When it registered.
    let registeredAt = ContinuousClock.now
    /// Callers of ``exchange(_:)`` waiting for a `result` or `failure`, by id.
    private var exchanges: [MessageID: CheckedContinuation<WireMessage?, Never>] = [:]
    /// Called once when the connection ends.
    var onLost: ((WorkerSession) -> Void)?
    /// Called with each change to the shared store another coordinator made, as the (cache)
    /// worker forwarded it.
    var onSharedChange: ((SharedChangeMessage) -> Void)?
    /// Called when a slot frees up (an answer came, or a cancelled request was forgotten).
    var onSlotFreed: ((WorkerSession) -> Void)?

    /// How many requests a worker that announces no `capacity` in its hello runs at once.
    static let defaultCapacity = 64
    /// How long a cancelled request may stay unanswered before it is forgotten.
    static let cancelGrace: Duration = .seconds(10)

    /// How many requests the worker runs at once: its hello's `capacity`, else ``defaultCapacity``.
    let capacity: Int
    /// How many requests for one upstream host it runs at once: its hello's `hostCapacity`,
    /// else ``capacity``.
    let hostCapacity: Int

    init(id: String, hello: Hello, connection: FrameConnection, logger: Logger) {
        self.id = id
        self.hello = hello
        self.connection = connection
        self.logger = logger
        self.shardName = hello.name ?? id
        self.capacity = hello.capacity ?? Self.defaultCapacity
        self.hostCapacity = min(hello.hostCapacity ?? capacity, capacity)
        connection.onMessage = { [unowned self] message in received(message) }
        connection.onEnd = { [self] end in ended(end) }
    }

    /// The worker's kind.
    var kind: String { hello.kind ?? "worker" }

    /// Requests out and slots promised.
    var load: Int { outstanding.count + reserved }

    /// Whether it takes new requests: connected, answering, not draining.
    var isServing: Bool { lostReason == nil && !isDraining }

    /// Whether another request may be sent now.
    var hasRoom: Bool { isServing && load < capacity }

    /// Whether another request for upstream `host` may be sent now.
    func hasRoom(forHost host: String) -> Bool {
        hasRoom && byHost[host, default: 0] < hostCapacity
    }

    /// Promises a slot to a request for `host`, which ``forward(_:host:)`` then takes.
    func reserve(host: String) {
        reserved += 1
        byHost[host, default: 0] += 1
    }

    private func release(host: String) {
        let left = byHost[host, default: 1] - 1
        byHost[host] = left > 0 ? left : nil
    }

    /// Whether it has nothing left to answer (requests or admin exchanges).
    var isIdle: Bool { outstanding.isEmpty && exchanges.isEmpty }

    /// Sends a heartbeat `ping`. Loop thread only.
    func ping() {
        guard lostReason == nil else { return }
        let id = nextID
        nextID += 1
        try? connection.send(.ping(PingMessage(id: id)))
    }

    /// Takes the worker out of rotation because it stopped answering: every request waiting for
    /// it is released as lost (idempotent ones move to another worker), every admin exchange
    /// ends without an answer. The connection stays until the caller kills the process or
    /// closes it. Loop thread only.
    func declareUnresponsive(_ reason: String) {
        guard lostReason == nil else { return }
        isUnresponsive = true
        strand(reason)
    }

    /// Forwards `request` (for upstream `host`, in the slot ``reserve(host:)`` promised) and
    /// waits for the worker's answer. A cancelled caller gets a `cancelled` failure at once and
    /// the worker gets a `cancel`. Runs on the loop.
    func forward(_ request: Request, host: String) async -> Reply {
        connection.loop.preconditionInEventLoop()
        reserved -= 1
        if let lostReason {
            release(host: host)
            return .lost(lostReason)
        }
        let id = nextID
        nextID += 1
        do {
            try connection.send(.request(request.message(id: id)))
        } catch {
            release(host: host)
            onSlotFreed?(self)
            return .answered(.failure(ProviderFailure(code: "requestTooLarge", message: "\(error)")))
        }
        outstanding.insert(id)
        hostOf[id] = host
        forwarded += 1
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if let lostReason {
                    continuation.resume(returning: .lost(lostReason))
                } else if Task.isCancelled {
                    cancel(id)
                    continuation.resume(returning: .answered(.failure(.cancelled)))
                } else {
                    waiting[id] = continuation
                }
            }
        } onCancel: {
            connection.loop.execute { [self] in
                guard let continuation = waiting.removeValue(forKey: id) else { return }
                cancel(id)
                continuation.resume(returning: .answered(.failure(.cancelled)))
            }
        }
    }

    /// The name keys are sharded on: the worker's own (stable across restarts, so a restarted
    /// cache worker gets its keys back; no two connected workers of a kind share one), else its id.
    let shardName: String

    /// How long a worker may take to answer an admin message before the exchange is given up.
    static let exchangeTimeoutMs: UInt64 = 10_000

    /// Sends the admin message `make` builds with a fresh id (`store`, `invalidate`, `status`)
    /// and waits for the worker's `result` or `failure`; nil when the worker is lost first, the
    /// message cannot be sent, or no answer comes within `timeoutMs`. Runs on the loop.
    func exchange(timeoutMs: UInt64 = exchangeTimeoutMs, _ make: (MessageID) -> WireMessage) async -> WireMessage? {
        connection.loop.preconditionInEventLoop()
        guard lostReason == nil else { return nil }
        let id = nextID
        nextID += 1
        do {
            try connection.send(make(id))
        } catch {
            return nil
        }
        let timer = try? LoopTimer(on: connection.loop)
        defer { timer?.close() }
        return await withCheckedContinuation { continuation in
            if lostReason != nil { return continuation.resume(returning: nil) }
            exchanges[id] = continuation
            timer?.start(afterMs: timeoutMs) { [self] in
                guard let waiting = exchanges.removeValue(forKey: id) else { return }
                logger.warning("worker \(self.id) did not answer exchange \(id) within \(timeoutMs) ms")
                waiting.resume(returning: nil)
            }
        }
    }

    /// Records why the worker is out of rotation and releases everything waiting for it: its
    /// requests as lost (they may be tried elsewhere), its exchanges without an answer.
    private func strand(_ reason: String) {
        lostReason = reason
        let stranded = waiting
        waiting.removeAll()
        outstanding.removeAll()
        cancelled.removeAll()
        for host in hostOf.values { release(host: host) }
        hostOf.removeAll()
        if !stranded.isEmpty {
            logger.warning("\(reason) with \(stranded.count) request(s) in flight; retrying them")
        } else {
            logger.info("\(reason)")
        }
        for continuation in stranded.values { continuation.resume(returning: .lost(reason)) }
        let unanswered = exchanges
        exchanges.removeAll()
        for continuation in unanswered.values { continuation.resume(returning: nil) }
    }

    /// Asks the worker to stop working on request `id`; its final answer is still expected,
    /// for ``cancelGrace``.
    private func cancel(_ id: MessageID) {
        cancelled[id] = .now
        try? connection.send(.cancel(CancelMessage(id: id)))
    }

    /// Forgets the cancelled requests the worker has not answered within ``cancelGrace`` of
    /// their cancel: their slots free up, and an answer that still comes is ignored.
    func forgetUnansweredCancellations(now: ContinuousClock.Instant = .now) {
        let overdue = cancelled.filter { now - $0.value > Self.cancelGrace }.keys
        guard !overdue.isEmpty else { return }
        for id in overdue {
            cancelled[id] = nil
            outstanding.remove(id)
            if let host = hostOf.removeValue(forKey: id) { release(host: host) }
        }
        forgotten += overdue.count
        logger.warning("worker \(id) did not answer \(overdue.count) cancelled request(s) within \(Self.cancelGrace); forgetting them")
        onSlotFreed?(self)
    }

    private func received(_ message: WireMessage) {
        lastHeard = .now
        // An unresponsive worker's late words change nothing: its requests went elsewhere.
        if isUnresponsive { return }
        if let id = message.id, let exchange = exchanges.removeValue(forKey: id) {
            switch message {
            case .result, .failure: return exchange.resume(returning: message)
            default: exchanges[id] = exchange
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
            guard result.id < nextID else {
                connection.fail(ProtocolError(.unexpectedMessage, "no exchange \(result.id) is under way on this connection", id: result.id))
                return
            }
            lateAnswers += 1
            return
        case .ping(let ping):
            // Workers may ping too (protocol section 1), and every ping is answered.
            try? connection.send(.pong(PongMessage(id: ping.id)))
            return
        case .sharedChange(let change):
            guard CachePool.kinds.contains(kind) else {
                connection.fail(ProtocolError(.unexpectedMessage, "a \(kind) worker keeps no shared cache; only cache workers send sharedChange"))
                return
            }
            onSharedChange?(change)
            return
        case .error(let error):
            logger.error("worker \(id) reported a protocol error: \(error.code.rawValue): \(LogText.sanitized(error.message))")
            return
        default:
            connection.fail(ProtocolError(.unexpectedMessage, "a worker does not send \(message.type) messages"))
            return
        }
        let id = message.id!
        guard outstanding.remove(id) != nil else {
            // A reply to a request this side forgot (or answered twice): ignored (protocol
            // section 5); one to an id never sent is a protocol error.
            guard id < nextID else {
                connection.fail(ProtocolError(.unexpectedMessage, "no request \(id) is in flight on this connection", id: id))
                return
            }
            lateAnswers += 1
            return
        }
        cancelled[id] = nil
        if let host = hostOf.removeValue(forKey: id) { release(host: host) }
        answered += 1
        if case .failure = outcome { failures += 1 }
        waiting.removeValue(forKey: id)?.resume(returning: .answered(outcome))
        onSlotFreed?(self)
    }

    private func ended(_ end: FrameConnection.End) {
        if lostReason == nil {
            strand("worker \(id) (pid \(hello.pid.map(String.init) ?? "?")) disconnected: \(end)")
        }
        let onLost = self.onLost
        self.onLost = nil
        onSlotFreed = nil
        onSharedChange = nil
        onLost?(self)
    }
}
