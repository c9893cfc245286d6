#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Monarch
import MonarchLoop
import MonarchTransport
import MonarchWire
import Synchronization

/// Serves one provider as a worker process: dials in to the coordinator, registers its kind,
/// answers each request the coordinator forwards, many at once, until the coordinator closes
/// the connection.
///
/// Every request gets exactly one answer (a `cancel` makes the provider's task cancelled; its
/// answer, usually a `cancelled` failure, is still sent). A worker asked to stop (``drain()``)
/// answers new requests with an `unavailable` failure, so the coordinator retries them on
/// another worker, and closes once the requests it runs are answered.
///
/// Answers keep to the frame limit the coordinator announced in its `welcome` (the protocol's
/// 16 MiB when it announced none): an answer (a response, miss or failure, or the `result` of a
/// `store`, `invalidate` or `status`) whose JSON is larger is never sent, and never silently
/// dropped either: a `failure` with code `responseTooLarge`, naming the answer's size and the
/// limit, goes out instead for the same id (counted in ``WorkerCounters/tooLarge``). An answer
/// that cannot be sent at all (the connection ended, or not even that failure fits) is logged
/// at error level and counted in ``WorkerCounters/unsent``.
public final class WorkerRuntime: Sendable {
    /// Who the worker is.
    public let identity: WorkerIdentity
    /// What answers the requests.
    public let provider: any RequestProvider
    /// The loop the worker's connection and tasks run on.
    public let loop: EventLoop
    private let logger: Logger
    private let adoptLimits: @Sendable (AnswerLimits) -> Void
    private let state = Mutex(State())

    private struct State {
        /// The requests being answered.
        var tasks: [MessageID: Running] = [:]
        /// `store` and `invalidate` exchanges under way (a drain waits for them too).
        var maintaining = 0
        /// Requests answered before their task was recorded in `tasks`.
        var answeredEarly: Set<MessageID> = []
        var counters = WorkerCounters()
        var draining = false
        var connection: AsyncFrameConnection?
        var limits = AnswerLimits.protocolDefault
        /// Encodes answers as the connection does (raw bodies once the welcome agreed to them).
        var codec = MessageCodec()
        /// `sharedChange` messages on their way to the coordinator.
        var forwarding = 0
    }

    /// How many `sharedChange` messages may be on their way to the coordinator at once; past
    /// that, changes are dropped (counted in ``WorkerCounters/unsent``) rather than queued
    /// without bound.
    static let forwardingLimit = 1024

    /// A request being answered.
    private enum Running: Sendable {
        /// By a task running the provider's ``RequestProvider/perform(_:)``.
        case task(Task<Void, Never>)
        /// By a run of a ``LoopRequestProvider`` on its loop.
        case run(RunSlot)

        /// Ends the request promptly; its answer still comes.
        func cancel(on loop: EventLoop?) {
            switch self {
            case .task(let task):
                task.cancel()
            case .run(let slot):
                guard let loop else { return }
                if loop.inEventLoop { slot.cancel() } else { loop.execute { slot.cancel() } }
            }
        }
    }

    /// Where a ``LoopRequestProvider``'s run is kept once started, and a cancel that came
    /// before it. The provider's loop thread only.
    private final class RunSlot: @unchecked Sendable {
        var run: (any ProviderRun)?
        var cancelled = false

        func cancel() {
            guard !cancelled else { return }
            cancelled = true
            run?.cancel()
        }
    }

    /// The provider as a ``LoopRequestProvider``, when it is one: its requests are then
    /// answered through callbacks on its loop, with no task each.
    private let loopProvider: (any LoopRequestProvider)?

    /// A runtime serving `provider` as `identity` on `loop`.
    ///
    /// - Parameter adoptLimits: called once the coordinator's `welcome` arrived, before any
    ///   request is served, with the limits its answers must keep to; a provider that reads or
    ///   fetches bodies caps them at ``AnswerLimits/maxBodyBytes`` there, so that an oversized
    ///   body fails early with a clear failure.
    public init(
        identity: WorkerIdentity, provider: any RequestProvider, loop: EventLoop, logger: Logger,
        adoptLimits: @escaping @Sendable (AnswerLimits) -> Void = { _ in }
    ) {
        self.identity = identity
        self.provider = provider
        self.loopProvider = provider as? any LoopRequestProvider
        self.loop = loop
        self.logger = logger
        self.adoptLimits = adoptLimits
    }

    /// What the worker has done so far.
    public var counters: WorkerCounters { state.withLock { $0.counters } }

    /// The limits answers keep to: the last welcome's (the protocol's default before the
    /// first).
    public var limits: AnswerLimits { state.withLock { $0.limits } }

    /// Connects to the coordinator at `address`, registers, and serves until the coordinator
    /// closes the connection (returns) or the connection fails (throws).
    ///
    /// - Throws: ``WorkerError``.
    public func run(coordinator address: SocketAddress) async throws(WorkerError) {
        let connection: AsyncFrameConnection
        do {
            connection = try await AsyncFrameConnection.connect(to: address, on: loop)
        } catch {
            throw .cannotConnect(address, "\(error)")
        }
        let welcome: Welcome
        do {
            welcome = try await register(on: connection)
        } catch {
            // Refused, or the coordinator went away mid-hello: the connection is closed here,
            // not left open for the loop's shutdown to find.
            await connection.close()
            throw error
        }
        let limits = AnswerLimits(welcome: welcome)
        do {
            try await connection.adopt(welcome)
        } catch {
            await connection.close()
            throw .connectionFailed("\(error)")
        }
        let codec = connection.connection.codec
        state.withLock {
            $0.limits = limits
            $0.codec = codec
        }
        adoptLimits(limits)
        // The coordinator logs the registration too; at info, `monarch up`'s ready line stays last.
        logger.debug("registered with the coordinator at \(address) as \(welcome.workerId ?? identity.name); answers in \(limits)")
        state.withLock { $0.connection = connection }
        defer { state.withLock { $0.connection = nil } }
        if loopProvider != nil {
            // Requests and cancels are taken where they arrive, on the loop, with no task woken
            // for them; their order against pings and status requests does not matter.
            try? await loop.submit {
                connection.takeMessagesOnLoop { message in
                    switch message {
                    case .request(let request): { self.start(request, on: connection) }
                    case .cancel(let cancel): { self.cancel(cancel) }
                    default: nil
                    }
                }
            }
        }
        if let origin = welcome.origin, let cache = provider as? any CacheMaintenance {
            cache.forwardSharedChanges(origin: origin) { [weak self] change in self?.forward(change, on: connection) }
        }
        do {
            while let message = try await connection.nextMessage() {
                await handle(message, on: connection)
            }
        } catch {
            cancelAll()
            throw .connectionFailed("\(error)")
        }
        cancelAll()
    }

    /// Stops taking requests and closes the connection once the requests in flight are
    /// answered (or after `timeout`); ``run(coordinator:)`` then returns.
    public func drain(timeout: Duration = .seconds(10)) async {
        state.withLock { $0.draining = true }
        let start = ContinuousClock.now
        while state.withLock({ !$0.tasks.isEmpty || $0.maintaining > 0 }), ContinuousClock.now - start < timeout {
            try? await Task.sleep(for: .milliseconds(20))
        }
        await state.withLock { $0.connection }?.close()
    }

    private func register(on connection: AsyncFrameConnection) async throws(WorkerError) -> Welcome {
        do {
            try await connection.send(.hello(identity.hello(pid: Int(getpid()))))
            switch try await connection.nextMessage() {
            case .welcome(let welcome): return welcome
            case .error(let error): throw WorkerError.refused("\(error.code.rawValue): \(error.message)")
            case let other?: throw WorkerError.refused("expected welcome, got \(other.type)")
            case nil: throw WorkerError.refused("the coordinator closed the connection")
            }
        } catch let error as WorkerError {
            throw error
        } catch {
            throw .refused("\(error)")
        }
    }

    private func handle(_ message: WireMessage, on connection: AsyncFrameConnection) async {
        switch message {
        case .request(let request):
            start(request, on: connection)
        case .cancel(let cancel):
            self.cancel(cancel)
        case .ping(let ping):
            await send(prepare(.pong(PongMessage(id: ping.id))), on: connection)
        case .status(let status):
            let figures = (provider as? any CacheMaintenance)?.statusFigures ?? [:]
            let data = counters.resultData.merging(figures) { counter, _ in counter }
            await send(prepare(.result(ResultMessage(id: status.id, data: data))), on: connection)
        case .store(let store):
            maintain(store.id, on: connection) { cache throws(ProviderFailure) in
                try await cache.store(Response(store), under: store.key, tags: store.tags ?? [], variant: store.variant)
                return ["stored": .bool(true)]
            }
        case .invalidate(let invalidate):
            maintain(invalidate.id, on: connection) { cache throws(ProviderFailure) in
                // A soft purge reports the entries it made stale; an invalidation those it removed.
                let keys = try await invalidate.soft ? cache.markStaleKeys(invalidate.target) : cache.invalidateKeys(invalidate.target)
                var data: [String: JSONValue] = [invalidate.soft ? "markedStale" : "removed": .integer(Int64(keys.count))]
                if keys.count <= invalidatedKeysReported { data["keys"] = .array(keys.map { .string($0) }) }
                return data
            }
        case .error(let error):
            logger.error("the coordinator reported a protocol error: \(error.code.rawValue): \(error.message)")
        default:
            logger.warning("ignoring an unexpected \(message.type) message from the coordinator")
        }
    }

    /// Ends the request a `cancel` names, if it is in flight; its answer still goes out.
    private func cancel(_ cancel: CancelMessage) {
        let running = state.withLock { state -> Running? in
            guard let running = state.tasks[cancel.id] else { return nil }
            state.counters.cancels += 1
            return running
        }
        running?.cancel(on: loopProvider?.loop)
    }

    /// Runs a `store` or `invalidate` against the provider, if it is a cache, and sends the
    /// `result` (or a `failure`) answering `id`.
    private func maintain(
        _ id: MessageID, on connection: AsyncFrameConnection,
        _ operation: @escaping @Sendable (any CacheMaintenance) async throws(ProviderFailure) -> [String: JSONValue]
    ) {
        let provider = self.provider
        let kind = identity.kind
        state.withLock { $0.maintaining += 1 }
        Task(executorPreference: loop) {
            defer { self.state.withLock { $0.maintaining -= 1 } }
            let answer: WireMessage
            if let cache = provider as? any CacheMaintenance {
                do throws(ProviderFailure) {
                    answer = .result(ResultMessage(id: id, data: try await operation(cache)))
                } catch {
                    answer = .failure(FailureMessage(id: id, error: .init(code: error.code, message: error.message)))
                }
            } else {
                answer = .failure(FailureMessage(
                    id: id, error: .init(code: .invalidRequest, message: "a \(kind) worker keeps no responses")))
            }
            await self.send(self.prepare(answer), on: connection)
        }
    }

    private func start(_ message: RequestMessage, on connection: AsyncFrameConnection) {
        let id = message.id
        if state.withLock({ $0.tasks[id] != nil }) {
            // The protocol's rule for an id reused while in flight: an error, then the close.
            let frames = connection.connection
            loop.execute {
                frames.fail(ProtocolError(.unexpectedMessage, "request id \(id) is already in flight", id: id))
            }
            return
        }
        let refusal: WireMessage? = state.withLock { state in
            state.counters.requests += 1
            state.counters.inFlight += 1
            guard !state.draining else {
                return .failure(FailureMessage(id: id, error: .init(code: .unavailable, message: "the worker is stopping")))
            }
            return nil
        }
        if let refusal {
            state.withLock { $0.counters.count(refusal) }
            Task(executorPreference: loop) { await self.send(self.prepare(refusal), on: connection) }
            return
        }
        if let loopProvider {
            start(message, with: loopProvider, on: connection)
            return
        }
        let provider = self.provider
        let source = identity.kind
        let task = Task(executorPreference: loop) {
            let outcome = await provider.perform(Request(message))
            let outgoing = self.prepare(outcome.message(id: id, source: source), source: source)
            self.state.withLock { state in
                if state.tasks.removeValue(forKey: id) == nil { state.answeredEarly.insert(id) }
                // What the coordinator gets is counted: a response too large is a failure.
                state.counters.count(outgoing.message)
            }
            await self.send(outgoing, on: connection)
        }
        state.withLock { state in
            // A fast provider may have answered before its task could be recorded.
            if state.answeredEarly.remove(id) == nil { state.tasks[id] = .task(task) }
        }
    }

    /// Starts a request of a ``LoopRequestProvider`` on its loop, with no task: the answer is
    /// sent from the provider's callback, at once when the connection takes it.
    private func start(_ message: RequestMessage, with provider: any LoopRequestProvider, on connection: AsyncFrameConnection) {
        let id = message.id
        let slot = RunSlot()
        state.withLock { $0.tasks[id] = .run(slot) }
        let source = identity.kind
        let begin: @Sendable () -> Void = {
            let run = provider.start(Request(message)) { outcome in
                let answer = outcome.message(id: id, source: source)
                // Encoded straight into the connection's write buffer when it takes the answer
                // now; one too large for a frame is replaced as `prepare` replaces it.
                if (try? connection.sendAtOnce(answer)) == true {
                    self.state.withLock { state in
                        state.tasks[id] = nil
                        state.counters.count(answer)
                    }
                    return
                }
                let outgoing = self.prepare(answer, source: source)
                self.state.withLock { state in
                    state.tasks[id] = nil
                    state.counters.count(outgoing.message)
                }
                self.sendSoon(outgoing, on: connection)
            }
            slot.run = run
            if slot.cancelled { run.cancel() }
        }
        if provider.loop.inEventLoop { begin() } else { provider.loop.execute(begin) }
    }

    /// Sends a prepared answer at once when the connection takes it now (on its loop, writable),
    /// else from a task that waits until it does.
    private func sendSoon(_ outgoing: Outgoing, on connection: AsyncFrameConnection) {
        if !outgoing.replaced, let frame = outgoing.frame {
            do {
                if try connection.sendAtOnce(frame: frame, then: outgoing.body) { return }
            } catch {
                state.withLock { $0.counters.unsent += 1 }
                let what = outgoing.message.id.map { "the \(outgoing.message.type) answering \($0)" } ?? "a \(outgoing.message.type)"
                logger.error("could not send \(what) to the coordinator: \(error)")
                return
            }
        }
        Task(executorPreference: loop) { await self.send(outgoing, on: connection) }
    }

    /// An answer ready to go out: what the coordinator gets (the answer, or the
    /// `responseTooLarge` failure that replaces it) and its encoded frame, nil when nothing
    /// can be sent (then `problem` says why).
    private struct Outgoing {
        var message: WireMessage
        /// The whole frame, or its head when ``body`` follows it.
        var frame: [UInt8]?
        /// The frame's last bytes, a large raw body sent without a copy; nil when ``frame`` is
        /// whole.
        var body: Data?
        var replaced = false
        var problem: String?
    }

    /// Encodes `answer` and checks it against the frame limit. An answer that does not fit is
    /// replaced by a `responseTooLarge` failure for the same id (carrying `source` as its one
    /// attempt for a request's answer, as a provider's failure does).
    private func prepare(_ answer: WireMessage, source: String? = nil) -> Outgoing {
        var (limit, codec) = state.withLock { ($0.limits.maxFrameBytes, $0.codec) }
        codec.maxFrameBytes = limit
        var frame: [UInt8] = []
        let length: UInt32
        do {
            let body = try codec.appendFrameLeavingBody(answer, to: &frame)
            return Outgoing(message: answer, frame: frame, body: body)
        } catch {
            length = error.payloadLength
        }
        let what = "the \(answer.type)" + (answer.id.map { " answering \($0)" } ?? "")
        let why = "\(what) is \(length) bytes as JSON, more than the coordinator's frame limit of \(limit) bytes"
        guard let id = answer.id else { return Outgoing(message: answer, problem: why) }
        let failure: WireMessage
        if let source {
            failure = ProviderOutcome.failure(ProviderFailure(code: .responseTooLarge, message: why))
                .message(id: id, source: source)
        } else {
            failure = .failure(FailureMessage(id: id, error: .init(code: .responseTooLarge, message: why)))
        }
        var replacement: [UInt8] = []
        do {
            try codec.appendFrame(failure, to: &replacement)
        } catch {
            return Outgoing(
                message: failure, replaced: true,
                problem: "\(why); not even the responseTooLarge failure (\(error.payloadLength) bytes) fits")
        }
        return Outgoing(message: failure, frame: replacement, replaced: true)
    }

    /// Sends a prepared answer; what cannot be sent is logged at error level and counted.
    private func send(_ outgoing: Outgoing, on connection: AsyncFrameConnection) async {
        if outgoing.replaced { state.withLock { $0.counters.tooLarge += 1 } }
        guard let frame = outgoing.frame else {
            state.withLock { $0.counters.unsent += 1 }
            logger.error("cannot answer the coordinator: \(outgoing.problem ?? "the answer does not fit in a frame")")
            return
        }
        if outgoing.replaced, case .failure(let failure) = outgoing.message {
            logger.warning("answering \(failure.id) with responseTooLarge: \(failure.error.message)")
        }
        do {
            if Task.isCancelled {
                // A cancelled request still gets its answer: a cancelled task would give up
                // waiting for a socket that is not writable, so another task sends it.
                try await Task(executorPreference: loop) { try await connection.send(frame: frame, then: outgoing.body) }.value
            } else {
                try await connection.send(frame: frame, then: outgoing.body)
            }
        } catch {
            state.withLock { $0.counters.unsent += 1 }
            let what = outgoing.message.id.map { "the \(outgoing.message.type) answering \($0)" } ?? "a \(outgoing.message.type)"
            logger.error("could not send \(what) to the coordinator: \(error)")
        }
    }

    /// Sends a change another coordinator made to the shared store, unless
    /// ``forwardingLimit`` are on their way already.
    private func forward(_ change: SharedChangeMessage, on connection: AsyncFrameConnection) {
        let admitted = state.withLock { state -> Bool in
            // The connection ended: the coordinator hears nothing more through it.
            guard state.connection != nil else { return false }
            guard state.forwarding < Self.forwardingLimit else {
                state.counters.unsent += 1
                return false
            }
            state.forwarding += 1
            return true
        }
        guard admitted else { return }
        Task(executorPreference: loop) {
            defer { self.state.withLock { $0.forwarding -= 1 } }
            await self.send(self.prepare(.sharedChange(change)), on: connection)
        }
    }

    private func cancelAll() {
        let running = state.withLock { state in
            let running = Array(state.tasks.values)
            state.tasks.removeAll()
            return running
        }
        for request in running { request.cancel(on: loopProvider?.loop) }
    }
}
