#if canImport(Glibc)
import Glibc
#endif
import Monarch
import MonarchLoop
import MonarchWire
import Synchronization

/// A connection to a Monarch coordinator: requests go down the cluster's chain and come back
/// as responses, many at once on one connection, each with its own deadline and cancellation.
///
/// ```swift
/// let client = try await MonarchClient.connect(to: SocketAddress(parsing: "unix:.monarch/monarch.sock"))
/// let response = try await client.perform(Request(path: "hello.txt"))
/// await client.close()
/// ```
public final class MonarchClient: Sendable {
    private let connection: AsyncFrameConnection
    /// The loop the client created, shut down by ``close()``; nil when the caller gave one.
    private let ownedLoop: EventLoop?
    private let state = Mutex(State())
    private let reader = Mutex<Task<Void, Never>?>(nil)
    // wt-keys: the active watches (MonarchClient+Watch.swift, WatchChannel.swift).
    let watchTable = WatchTable()

    private struct State {
        var nextID: MessageID = 1
        var pending: [MessageID: CheckedContinuation<WireMessage, any Error>] = [:]
        var ended: MonarchClientError?
        /// Exchanges whose message has gone out: a cancel for them may be sent at once.
        var sent: Set<MessageID> = []
        /// Exchanges cancelled before their message went out: the cancel follows the message.
        var cancelBeforeSent: Set<MessageID> = []
    }

    private init(connection: AsyncFrameConnection, ownedLoop: EventLoop?) {
        self.connection = connection
        self.ownedLoop = ownedLoop
    }

    /// Connects to the coordinator at `address` and says hello.
    ///
    /// - Parameters:
    ///   - loop: the event loop to use; by default the client runs its own.
    ///   - token: the shared secret, where the listener requires one.
    /// - Throws: ``MonarchClientError/cannotConnect(_:)``.
    public static func connect(
        to address: SocketAddress, on loop: EventLoop? = nil, token: String? = nil
    ) async throws(MonarchClientError) -> MonarchClient {
        let ownedLoop: EventLoop?
        do {
            ownedLoop = loop == nil ? try EventLoop(name: "monarch-client") : nil
        } catch {
            throw .cannotConnect("cannot start an event loop: \(error)")
        }
        let loop = loop ?? ownedLoop!
        do {
            let connection = try await AsyncFrameConnection.connect(to: address, on: loop)
            try await connection.send(.hello(Hello(role: .client, token: token, pid: Int(getpid()))))
            switch try await connection.nextMessage() {
            case .welcome: break
            case .error(let error):
                throw MonarchClientError.cannotConnect("\(address) refused: \(error.code.rawValue): \(error.message)")
            case let other?:
                throw MonarchClientError.cannotConnect("\(address) answered hello with \(other.type)")
            case nil:
                throw MonarchClientError.cannotConnect("\(address) closed the connection")
            }
            let client = MonarchClient(connection: connection, ownedLoop: ownedLoop)
            client.startReading()
            return client
        } catch {
            _ = ownedLoop?.shutdown()
            if let error = error as? MonarchClientError { throw error }
            throw .cannotConnect("\(address): \(error)")
        }
    }

    /// The coordinator's answer to `request`, sent under the domain called `domain` (the
    /// route's domain when nil).
    ///
    /// Cancelling the calling task sends a `cancel`; the call then throws the `cancelled` chain error.
    /// - Throws: ``MonarchClientError``.
    public func perform(_ request: Request, domain: String? = nil) async throws(MonarchClientError) -> Response {
        let answer = try await exchange { id in .request(request.message(id: id, domain: domain)) }
        switch answer {
        case .response(let response): return Response(response)
        case .failure(let failure): throw .chain(ChainError(failure.error))
        default: throw .connectionLost("unexpected \(answer.type) in answer to a request")
        }
    }

    /// The coordinator's status report: pools, workers, counters, per-domain figures.
    ///
    /// - Throws: ``MonarchClientError``.
    public func status() async throws(MonarchClientError) -> StatusReport {
        switch try await exchange({ id in .status(StatusMessage(id: id)) }) {
        case .result(let result):
            do {
                return try result.report(as: StatusReport.self)
            } catch {
                throw .connectionLost("the coordinator's status report is malformed: \(error)")
            }
        case .failure(let failure): throw .adminFailed("\(failure.error.code): \(failure.error.message)")
        case let other: throw .connectionLost("unexpected \(other.type) in answer to status")
        }
    }

    /// Makes `count` local workers of `kind` run (the coordinator's own, started by `monarch
    /// up`): returns once new workers have registered and leaving ones have drained and exited.
    ///
    /// - Returns: what changed, and how many workers of the kind dialled in from elsewhere.
    /// - Throws: ``MonarchClientError/adminFailed(_:)`` when the coordinator starts no workers,
    ///   has none of that kind, or a new worker did not register.
    public func scale(_ kind: String, to count: Int) async throws(MonarchClientError) -> ScaleReport {
        switch try await exchange({ id in .scale(ScaleMessage(id: id, kind: kind, count: count)) }) {
        case .result(let result):
            do {
                return try result.report(as: ScaleReport.self)
            } catch {
                throw .connectionLost("the coordinator's scale report is malformed: \(error)")
            }
        case .failure(let failure): throw .adminFailed("\(failure.error.code): \(failure.error.message)")
        case let other: throw .connectionLost("unexpected \(other.type) in answer to scale")
        }
    }

    /// Drops cached entries on every cache worker: by resource path (resolved through the
    /// coordinator's routes), path prefix, tag, exact key or key prefix (see ``CacheTarget``;
    /// ``invalidate(path:domain:)`` and its siblings say it shorter). Keys read
    /// `METHOD domain path?sorted-query`, such as `GET api users/1` (``CacheKey``).
    ///
    /// - Returns: how many entries were removed (0 when nothing was cached under the target),
    ///   on how many workers, and what the target resolved to.
    /// - Throws: ``MonarchClientError/adminFailed(_:)`` when no route matches a path, no cache
    ///   worker is connected or one did not answer.
    public func invalidate(_ target: InvalidateMessage.Target) async throws(MonarchClientError) -> Invalidation {
        switch try await exchange({ id in .invalidate(InvalidateMessage(id: id, target: target)) }) {
        case .result(let result):
            return Invalidation(result)  // wt-keys: the report parsed in Invalidation.swift (with `targets`)
        case .failure(let failure): throw .adminFailed("\(failure.error.code): \(failure.error.message)")
        case let other: throw .connectionLost("unexpected \(other.type) in answer to invalidate")
        }
    }

    /// Closes the connection; calls still waiting throw ``MonarchClientError/connectionLost(_:)``.
    public func close() async {
        await connection.close()
        await reader.withLock { $0 }?.value
        if let ownedLoop { _ = ownedLoop.shutdown() }
    }

    /// Sends the message `make` builds with a fresh id and waits for the answer with that id.
    /// (wt-keys: internal, for MonarchClient+Watch.swift.)
    func exchange(_ make: (MessageID) -> WireMessage) async throws(MonarchClientError) -> WireMessage {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let message = make(id)
        defer {
            state.withLock { state in
                state.sent.remove(id)
                state.cancelBeforeSent.remove(id)
            }
        }
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let ended = state.withLock { state -> MonarchClientError? in
                        if state.ended == nil { state.pending[id] = continuation }
                        return state.ended
                    }
                    if let ended { continuation.resume(throwing: ended) }
                    Task {
                        do {
                            try await connection.send(message)
                        } catch {
                            fail(id, with: .connectionLost("\(error)"))
                            return
                        }
                        // A cancel that came first was held back so as not to overtake the message.
                        let cancelNow = state.withLock { state -> Bool in
                            let asked = state.cancelBeforeSent.remove(id) != nil
                            guard state.pending[id] != nil else { return false }
                            if !asked { state.sent.insert(id) }
                            return asked
                        }
                        if cancelNow { try? await connection.send(.cancel(CancelMessage(id: id))) }
                    }
                }
            } onCancel: {
                let sentAlready = state.withLock { state -> Bool in
                    if state.sent.contains(id) { return true }
                    state.cancelBeforeSent.insert(id)
                    return false
                }
                if sentAlready { Task { try? await connection.send(.cancel(CancelMessage(id: id))) } }
            }
        } catch let error as MonarchClientError {
            throw error
        } catch {
            throw .connectionLost("\(error)")
        }
    }

    private func fail(_ id: MessageID, with error: MonarchClientError) {
        state.withLock { $0.pending.removeValue(forKey: id) }?.resume(throwing: error)
    }

    private func startReading() {
        let task = Task(executorPreference: connection.loop) { [connection] in
            var end = MonarchClientError.connectionLost("the coordinator closed the connection")
            do {
                while let message = try await connection.nextMessage() {
                    if case .error(let error) = message {
                        end = .connectionLost("protocol error: \(error.code.rawValue): \(error.message)")
                        continue
                    }
                    // wt-keys: pushed watch events go to their watch, not to an exchange.
                    if case .changed(let change) = message {
                        self.watchTable.deliver(change)
                        continue
                    }
                    guard let id = message.id else { continue }
                    self.state.withLock { $0.pending.removeValue(forKey: id) }?.resume(returning: message)
                }
            } catch {
                end = .connectionLost("\(error)")
            }
            let waiting = self.state.withLock { state in
                state.ended = end
                defer { state.pending.removeAll() }
                return Array(state.pending.values)
            }
            for continuation in waiting { continuation.resume(throwing: end) }
            // wt-keys: without a reconnect, watches end with the connection (a reconnecting
            // client calls restoreWatches() on its new connection instead).
            self.watchTable.finishAll()
        }
        reader.withLock { $0 = task }
    }
}
