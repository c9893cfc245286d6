#if canImport(Glibc)
import Glibc
#endif
import MonarchLoop
import MonarchTransport
import MonarchWire

/// One client connection of a load run, driven by callbacks on its loop's thread: it says
/// hello, then keeps the plan's number of requests in flight, each answer sending the next.
/// `@unchecked Sendable` as its shard is: only its shard's loop thread touches it, and its
/// loop callbacks (which must be `@Sendable`) run there.
final class BenchConnection: @unchecked Sendable {
    private unowned let shard: LoadShard
    /// The connection's number in the run (for distinct queries).
    let number: Int
    private var frames: FrameConnection?
    private var welcomed = false
    private var closed = false
    private var nextID: MessageID = 1
    /// When each request in flight was sent, by id (monotonic nanoseconds).
    private var sentAt: [MessageID: UInt64] = [:]
    private var codec = MessageCodec()
    private let deadlineMs: UInt64?

    init(shard: LoadShard, number: Int) {
        self.shard = shard
        self.number = number
        deadlineMs = shard.plan.deadline.map { duration in
            UInt64(max(0, duration.components.seconds)) * 1000
                + UInt64(max(0, duration.components.attoseconds) / 1_000_000_000_000_000)
        }
        sentAt.reserveCapacity(shard.plan.inFlight * 2)
    }

    /// Whether the coordinator welcomed the connection and it is still open.
    var isReady: Bool { welcomed && !closed }

    /// Connects and says hello; the shard hears of the outcome through `handshakeEnded`.
    func connect() {
        StreamConnection.connect(to: shard.plan.address, on: shard.loop) { result in
            switch result {
            case .failure(let error):
                guard !self.closed else { return }
                self.closed = true
                self.shard.handshakeEnded(error: "\(error)")
            case .success(let stream):
                guard !self.closed else {
                    stream.close()
                    return
                }
                let frames = FrameConnection(stream: stream)
                self.frames = frames
                frames.onFrame = { [weak self] payload in self?.received(payload) }
                frames.onEnd = { [weak self] end in self?.ended(end) }
                frames.start()
                do {
                    let plan = self.shard.plan
                    try frames.send(.hello(Hello(
                        role: .client, token: plan.token, pid: Int(getpid()), name: "monarch-bench",
                        features: plan.rawBodies ? WireFeature.supported : nil)))
                } catch {
                    self.handshakeFailed("hello: \(error)")
                }
            }
        }
    }

    /// Gives up on a handshake still under way (no welcome in time).
    func abandonHandshake(_ why: String) {
        handshakeFailed(why)
    }

    private func handshakeFailed(_ why: String) {
        guard !welcomed, !closed else { return }
        closed = true
        frames?.close()
        shard.handshakeEnded(error: why)
    }

    /// Sends requests until the plan's number is in flight (or sending has stopped).
    func fill() {
        let now = monotonicNanoseconds()
        while sentAt.count < shard.plan.inFlight && isReady && shard.maySend(now: now) {
            guard sendOne(now: now) else { return }
        }
    }

    /// Sends one request; false when there is nothing more to ask for or it could not go.
    private func sendOne(now: UInt64) -> Bool {
        guard let frames, let path = shard.nextPath() else { return false }
        let plan = shard.plan
        let id = nextID
        nextID += 1
        let query = plan.distinctQueries ? [QueryItem(name: "bench", value: "\(number)-\(id)")] : nil
        let request = RequestMessage(
            id: id, path: path, domain: plan.domain, query: query, policy: plan.policy, deadlineMs: deadlineMs)
        do {
            try frames.send(payload: codec.encode(.request(request)))
        } catch {
            shard.record(error: "requestTooLarge")
            return false
        }
        sentAt[id] = now
        shard.outstanding += 1
        return true
    }

    private func received(_ payload: [UInt8]) {
        guard welcomed else {
            welcome(payload)
            return
        }
        let now = monotonicNanoseconds()
        if let response = AnswerScanner.scan(payload) {
            guard let started = sentAt.removeValue(forKey: response.id) else { return }
            shard.outstanding -= 1
            shard.recordResponse(
                now: now, sentAt: started, status: response.status, source: response.source, bodyBytes: response.bodyBytes)
            answered(now: now)
            return
        }
        let message: WireMessage
        do {
            message = try codec.decode(payload)
        } catch {
            shard.record(error: "undecodable")
            frames?.fail(error)
            return
        }
        switch message {
        case .response(let response):
            guard let started = sentAt.removeValue(forKey: response.id) else { return }
            shard.outstanding -= 1
            shard.recordResponse(
                now: now, sentAt: started, status: response.status, source: response.source,
                bodyBytes: response.body?.count ?? 0)
            answered(now: now)
        case .failure(let failure):
            guard sentAt.removeValue(forKey: failure.id) != nil else { return }
            shard.outstanding -= 1
            shard.recordFailure(now: now, code: failure.error.code.rawValue)
            answered(now: now)
        case .ping(let ping):
            try? frames?.send(.pong(PongMessage(id: ping.id)))
        case .error(let error):
            shard.record(error: "protocol:\(error.code.rawValue)")
        default:
            break
        }
    }

    /// An exchange ended: send the next request, or let the shard finish.
    private func answered(now: UInt64) {
        if shard.maySend(now: now) {
            fill()
        }
        if sentAt.isEmpty || !shard.maySend(now: now) { shard.finishIfDrained() }
    }

    private func welcome(_ payload: [UInt8]) {
        switch try? codec.decode(payload) {
        case .welcome(let welcome)?:
            frames?.adopt(welcome)
            codec = frames?.codec ?? codec
            welcomed = true
            shard.handshakeEnded(error: nil)
        case .error(let error)?:
            handshakeFailed("refused: \(error.code.rawValue): \(error.message)")
        case let other?:
            handshakeFailed("answered hello with \(other.type)")
        case nil:
            handshakeFailed("answered hello with an undecodable frame")
        }
    }

    private func ended(_ end: FrameConnection.End) {
        guard !closed else { return }
        closed = true
        guard welcomed else {
            shard.handshakeEnded(error: "closed before its welcome: \(end)")
            return
        }
        if !sentAt.isEmpty {
            shard.record(error: "connectionLost", count: sentAt.count)
            shard.outstanding -= sentAt.count
            sentAt.removeAll()
        }
        shard.finishIfDrained()
    }

    /// Closes the connection (its end is then not an error).
    func close() {
        closed = true
        frames?.close()
        frames = nil
    }
}
