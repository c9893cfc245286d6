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
/// at error level and counted in ``WorkerCounters/unsent``. Over a connection in memory
/// (``serve(over:coordinator:greeting:)`` with an ``InMemoryConnection``) messages pass as
/// values, never as frames, so no frame limit applies there.
public final class WorkerRuntime: Sendable {
    /// Who the worker is.
    public let identity: WorkerIdentity
    /// What answers the requests.
    public let provider: any RequestProvider
    /// The loop the worker's connection and tasks run on.
    public let loop: EventLoop
    let logger: Logger
    private let adoptLimits: @Sendable (AnswerLimits) -> Void
    /// What the runtime keeps track of; this file and the sending of answers
    /// (`WorkerRuntime+Answers.swift`) touch it.
    let state = Mutex(State())

    struct State {
        /// The requests being answered.
        var tasks: [MessageID: Running] = [:]
        /// `store` and `invalidate` exchanges under way (a drain waits for them too).
        var maintaining = 0
        /// Requests answered before their task was recorded in `tasks`.
        var answeredEarly: Set<MessageID> = []
        var counters = WorkerCounters()
        var draining = false
        var connection: AsyncMessageConnection?
        var limits = AnswerLimits.protocolDefault
        /// `sharedChange` messages on their way to the coordinator.
        var forwarding = 0
    }

    /// How many `sharedChange` messages may be on their way to the coordinator at once; past
    /// that, changes are dropped (counted in ``WorkerCounters/unsent``) rather than queued
    /// without bound.
    static let forwardingLimit = 1024

    /// A request being answered.
    enum Running: Sendable {
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
    final class RunSlot: @unchecked Sendable {
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
        let connection: AsyncMessageConnection
        do {
            connection = try await AsyncMessageConnection.connect(to: address, on: loop)
        } catch {
            throw .cannotConnect(address, "\(error)")
        }
        try await serve(over: connection, coordinator: "\(address)")
    }

    /// Registers over `connection`, whose other end is the coordinator `name` (a socket's, or
    /// one in memory), and serves until the coordinator closes it (returns) or it fails
    /// (throws). Unless `greeting`, no hello is sent: the coordinator took the worker's hello
    /// (``WorkerIdentity/hello(pid:)``) as it attached the connection, as an in-memory
    /// connection is attached, and its first message is the welcome.
    ///
    /// - Throws: ``WorkerError``.
    public func serve(
        over connection: AsyncMessageConnection, coordinator name: String, greeting: Bool = true
    ) async throws(WorkerError) {
        let welcome: Welcome
        do {
            welcome = try await register(on: connection, greeting: greeting)
        } catch {
            // Refused, or the coordinator went away mid-hello: the connection is closed here,
            // not left open for the loop's shutdown to find.
            connection.close()
            throw error
        }
        let limits = AnswerLimits(welcome: welcome)
        do {
            try await connection.adopt(welcome)
        } catch {
            connection.close()
            throw .connectionFailed("\(error)")
        }
        state.withLock { $0.limits = limits }
        adoptLimits(limits)
        // The coordinator logs the registration too; at info, `monarch up`'s ready line stays last.
        logger.debug("registered with the coordinator at \(name) as \(welcome.workerId ?? identity.name); answers in \(limits)")
        state.withLock { $0.connection = connection }
        defer { state.withLock { $0.connection = nil } }
        if loopProvider != nil {
            // Requests and cancels are taken where they arrive, on the loop, with no task woken
            // for them; their order against pings and status requests does not matter.
            try? await loop.submit {
                connection.takeMessagesOnLoop { message in
                    switch message {
                    case .request(let request): self.start(request, on: connection)
                    case .cancel(let cancel): self.cancel(cancel)
                    default: return false
                    }
                    return true
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
    /// answered (or after `timeout`); ``run(coordinator:)`` (or
    /// ``serve(over:coordinator:greeting:)``) then returns.
    public func drain(timeout: Duration = .seconds(10)) async {
        state.withLock { $0.draining = true }
        let start = ContinuousClock.now
        while state.withLock({ !$0.tasks.isEmpty || $0.maintaining > 0 }), ContinuousClock.now - start < timeout {
            try? await Task.sleep(for: .milliseconds(20))
        }
        state.withLock { $0.connection }?.close()
    }

    private func register(on connection: AsyncMessageConnection, greeting: Bool) async throws(WorkerError) -> Welcome {
        do {
            if greeting { try await connection.send(.hello(identity.hello(pid: Int(getpid())))) }
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

    private func handle(_ message: WireMessage, on connection: AsyncMessageConnection) async {
        switch message {
        case .request(let request):
            start(request, on: connection)
        case .cancel(let cancel):
            self.cancel(cancel)
        case .ping(let ping):
            await send(.pong(PongMessage(id: ping.id)), on: connection)
        case .status(let status):
            let figures = (provider as? any CacheMaintenance)?.statusFigures ?? [:]
            let data = counters.resultData.merging(figures) { counter, _ in counter }
            await send(.result(ResultMessage(id: status.id, data: data)), on: connection)
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
        _ id: MessageID, on connection: AsyncMessageConnection,
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
            await self.send(answer, on: connection)
        }
    }

    private func start(_ message: RequestMessage, on connection: AsyncMessageConnection) {
        let id = message.id
        if state.withLock({ $0.tasks[id] != nil }) {
            // The protocol's rule for an id reused while in flight: an error, then the close.
            let messages = connection.connection
            loop.execute {
                messages.fail(ProtocolError(.unexpectedMessage, "request id \(id) is already in flight", id: id))
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
            Task(executorPreference: loop) { await self.send(refusal, on: connection) }
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
            self.state.withLock { state in
                if state.tasks.removeValue(forKey: id) == nil { state.answeredEarly.insert(id) }
            }
            await self.send(outcome.message(id: id, source: source), answering: source, on: connection)
        }
        state.withLock { state in
            // A fast provider may have answered before its task could be recorded.
            if state.answeredEarly.remove(id) == nil { state.tasks[id] = .task(task) }
        }
    }

    /// Starts a request of a ``LoopRequestProvider`` on its loop, with no task: the answer is
    /// sent from the provider's callback, at once when the connection takes it.
    private func start(_ message: RequestMessage, with provider: any LoopRequestProvider, on connection: AsyncMessageConnection) {
        let id = message.id
        let slot = RunSlot()
        state.withLock { $0.tasks[id] = .run(slot) }
        let source = identity.kind
        let begin: @Sendable () -> Void = {
            let run = provider.start(Request(message)) { outcome in
                let answer = outcome.message(id: id, source: source)
                self.state.withLock { $0.tasks[id] = nil }
                // Encoded straight into the connection's write buffer when it takes the answer
                // now; otherwise (not writable, or too large for a frame) a task sends it.
                if (try? connection.sendAtOnce(answer)) == true {
                    self.state.withLock { $0.counters.count(answer) }
                    return
                }
                Task(executorPreference: self.loop) { await self.send(answer, answering: source, on: connection) }
            }
            slot.run = run
            if slot.cancelled { run.cancel() }
        }
        if provider.loop.inEventLoop { begin() } else { provider.loop.execute(begin) }
    }

    /// Sends a change another coordinator made to the shared store, unless
    /// ``forwardingLimit`` are on their way already.
    private func forward(_ change: SharedChangeMessage, on connection: AsyncMessageConnection) {
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
            await self.send(.sharedChange(change), on: connection)
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
