import Monarch
import MonarchLoop
import MonarchTransport
import MonarchWire
import Synchronization

/// What a ``MonarchClient`` is made of: the current link to the coordinator, the
/// reconnection after it ends, and exchanges with a deadline and retries. Background tasks
/// hold the core, never the client, so a client nobody holds is released and shuts it down.
final class ClientCore: Sendable {
    /// Where the client's connections lead.
    let endpoint: ClientEndpoint
    let options: Options
    typealias Options = MonarchClient.Options

    private struct State {
        var link: ClientLink?
        /// The number of ``link`` among the links made so far.
        var generation = 0
        var closed = false
        var reconnecting: Task<Void, Never>?
        /// Exchanges waiting for a link, by ticket.
        var waiters: [Int: CheckedContinuation<ClientLink, any Error>] = [:]
        var nextTicket = 0
        /// Why the last link ended, or the last reconnection attempt failed.
        var lastProblem = "not connected"
    }

    private let state = Mutex(State())
    /// Messages the coordinator sends unasked (see ``ClientLink``); ignored until a feature
    /// (such as watching keys) installs a handler. Called on the loop's reader task, in order.
    let onPush = Mutex<(@Sendable (WireMessage) -> Void)?>(nil)
    /// Runs with each new link after a reconnection, before waiting requests use it: where a
    /// feature restores what lived on the lost connection (such as watches).
    let onReconnected = Mutex<(@Sendable (ClientLink) async -> Void)?>(nil)
    /// Whether a lost connection is made again at once, with nothing waiting for it (such as
    /// watches to restore); otherwise the client reconnects when it next has something to send.
    let staysConnected = Mutex<(@Sendable () -> Bool)?>(nil)

    init(endpoint: ClientEndpoint, options: Options) {
        self.endpoint = endpoint
        self.options = options
    }

    /// The first connection: its failure is the caller's.
    func dialFirst() async throws(MonarchError) {
        let link = try await dial()
        state.withLock { state in
            state.link = link
            state.generation += 1
        }
    }

    /// The number of the current connection among those made so far (ids are the
    /// connection's own: an id of another one means nothing on it); nil while there is none.
    var currentGeneration: Int? {
        state.withLock { $0.link == nil ? nil : $0.generation }
    }

    private func dial() async throws(MonarchError) -> ClientLink {
        let onPush: @Sendable (WireMessage) -> Void = { [weak self] message in self?.onPush.withLock { $0 }?(message) }
        let onEnd: @Sendable (ClientLink, String) -> Void = { [weak self] link, reason in self?.linkEnded(link, reason) }
        switch endpoint {
        case .socket(let address, let loop):
            let target = try await address.resolved(on: loop)
            return try await ClientLink.open(
                to: target, on: loop, token: options.token, heartbeat: options.heartbeat,
                handshakeTimeout: options.connectTimeout, onPush: onPush, onEnd: onEnd)
        case .inProcess(let name, let connect):
            let connection: any MessageConnection
            do {
                connection = try await connect()
            } catch {
                throw .transport(.init(.cannotConnect, "\(name): \(error)"))
            }
            return try await ClientLink.open(
                over: connection, name: name, heartbeat: options.heartbeat, handshakeTimeout: options.connectTimeout,
                onPush: onPush, onEnd: onEnd)
        }
    }

    /// The current link, or the next one once a reconnection succeeds.
    ///
    /// - Throws: ``MonarchError/transport(_:)`` once the client is closed;
    ///   ``MonarchError/cancelled`` when the task is cancelled while waiting.
    func link() async throws(MonarchError) -> ClientLink {
        let ticket = state.withLock { state in
            defer { state.nextTicket += 1 }
            return state.nextTicket
        }
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ClientLink, any Error>) in
                    let ready = state.withLock { state -> Result<ClientLink, MonarchError>? in
                        if state.closed { return .failure(.transport(.init(.connectionLost, "the client is closed"))) }
                        if Task.isCancelled { return .failure(.cancelled) }
                        if let link = state.link { return .success(link) }
                        state.waiters[ticket] = continuation
                        // A connection lost while nothing needed it is made again now.
                        if state.reconnecting == nil { state.reconnecting = Task { await self.reconnect(at: .now) } }
                        return nil
                    }
                    if let ready { continuation.resume(with: ready) }
                }
            } onCancel: {
                state.withLock { $0.waiters.removeValue(forKey: ticket) }?.resume(throwing: MonarchError.cancelled)
            }
        } catch let error as MonarchError {
            throw error
        } catch {
            throw .cancelled
        }
    }

    /// Sends the message `make` builds and returns the coordinator's answer within `deadline`
    /// (plus the margin), on a new link after a lost one when `idempotent` or when the message
    /// had not gone out.
    ///
    /// - Throws: ``MonarchError``: `timeout`, `cancelled`, or `transport` (`outcomeUnknown`
    ///   for a message that is not idempotent and went out on a link that was lost).
    func exchange(
        idempotent: Bool, deadline: Duration, what: String, _ make: @escaping @Sendable (MessageID) -> WireMessage
    ) async throws(MonarchError) -> WireMessage {
        let limit = deadline + options.deadlineMargin
        let outcome = await withTaskGroup(of: Result<WireMessage, MonarchError>?.self) { group in
            group.addTask {
                do throws(MonarchError) {
                    return .success(try await self.attempts(idempotent: idempotent, make))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next()!
            group.cancelAll()
            if let first { return first }
            if Task.isCancelled { return .failure(.cancelled) }
            let problem = state.withLock { $0.link == nil ? " (not connected: \($0.lastProblem))" : "" }
            return .failure(.timeout(ChainError(
                .deadlineExceeded, "no answer to \(what) within \(deadline) from \(endpoint)\(problem)")))
        }
        return try outcome.get()
    }

    /// Sends on the current link, again on the next one after a loss, up to the retry limit.
    private func attempts(
        idempotent: Bool, _ make: @escaping @Sendable (MessageID) -> WireMessage
    ) async throws(MonarchError) -> WireMessage {
        var retries = 0
        while true {
            let link = try await link()
            switch await link.exchange(make) {
            case .message(let message): return message
            case .cancelled: throw .cancelled
            case .unsendable(let reason): throw .chainFailure(ChainError(.requestTooLarge, "the request does not fit in a frame: \(reason)"))
            case .lost(let reason, let sent):
                if sent && !idempotent { throw .transport(.init(.outcomeUnknown, reason)) }
                if sent {
                    retries += 1
                    guard retries <= options.retries else {
                        throw .transport(.init(.connectionLost, "\(reason) (sent \(retries) times)"))
                    }
                }
                if state.withLock({ $0.closed }) { throw .transport(.init(.connectionLost, reason)) }
                // Wait for the link that replaces this one (the loss may not be noticed yet).
                linkEnded(link, reason)
            }
        }
    }

    /// `link` ended: unless a newer link replaced it already, forget it, and reconnect in the
    /// background, backing off, if anything waits for a link or the client ``staysConnected``
    /// (else the next exchange reconnects: a client the coordinator closed as idle does not
    /// come back just to be idle again).
    private func linkEnded(_ link: ClientLink, _ reason: String) {
        let eager = staysConnected.withLock { $0 }?() ?? false
        state.withLock { state in
            if let current = state.link {
                guard current === link else { return }
            }
            state.link = nil
            state.lastProblem = reason
            guard !state.closed, state.reconnecting == nil, eager || !state.waiters.isEmpty else { return }
            state.reconnecting = Task { await self.reconnect() }
        }
    }

    /// Dials until a link is made or the client closes: the first attempt at `start` (after
    /// the back-off's first delay by default), each later one after twice the delay before.
    private func reconnect(at start: ContinuousClock.Instant? = nil) async {
        var delay = options.reconnectDelay
        var first = true
        while !state.withLock({ $0.closed }) {
            if first, let start {
                try? await Task.sleep(until: start)
            } else {
                try? await Task.sleep(for: delay)
            }
            first = false
            if state.withLock({ $0.closed }) { break }
            do throws(MonarchError) {
                let link = try await dial()
                // A link that ended already (its end was ignored while reconnecting) is no link.
                if link.isEnded { throw .transport(.init(.connectionLost, "the new connection ended at once")) }
                let (waiters, closed) = state.withLock { state in
                    state.reconnecting = nil
                    if state.closed { return ([CheckedContinuation<ClientLink, any Error>](), true) }
                    state.link = link
                    state.generation += 1
                    defer { state.waiters.removeAll() }
                    return (Array(state.waiters.values), false)
                }
                if closed {
                    await link.close()
                    return
                }
                await onReconnected.withLock { $0 }?(link)
                for waiter in waiters { waiter.resume(returning: link) }
                return
            } catch {
                state.withLock { $0.lastProblem = "\(error)" }
                delay = min(delay * 2, options.maxReconnectDelay)
            }
        }
        state.withLock { $0.reconnecting = nil }
    }

    /// Marks the client closed and ends waiting exchanges; returns the link to close.
    private func markClosed() -> ClientLink? {
        let (link, waiters, reconnecting) = state.withLock { state in
            state.closed = true
            defer {
                state.waiters.removeAll()
                state.link = nil
            }
            return (state.link, Array(state.waiters.values), state.reconnecting)
        }
        reconnecting?.cancel()
        for waiter in waiters { waiter.resume(throwing: MonarchError.transport(.init(.connectionLost, "the client is closed"))) }
        return link
    }

    /// Closes for good and waits until the connection is closed.
    func shutdown() async {
        await markClosed()?.close()
    }

    /// Closes for good without waiting (from the client's deinit).
    func shutdownSoon() {
        markClosed()?.closeSoon()
    }
}
