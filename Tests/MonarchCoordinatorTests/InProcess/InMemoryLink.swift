import MonarchLoop
import MonarchTransport
import MonarchWire
import Synchronization

/// What a test's client or scripted worker sends and receives on, over a socket pair or in memory.
protocol TestLink: Sendable {
    /// Sends `message`, in order after those sent before.
    func send(_ message: WireMessage) async throws
    /// The next message received; nil once the connection ended.
    func nextMessage() async throws -> WireMessage?
    /// Closes the connection.
    func close() async
}

extension AsyncFrameConnection: TestLink {}

/// The peer's end of an in-memory connection (a client's, ``Coordinator/attachInMemoryClient(token:)``,
/// or a worker's, ``Coordinator/attachInMemoryWorker(_:)``) for async tests: messages go to the
/// coordinator's loop as values; what the coordinator sends waits in the end's queue until the
/// first ``nextMessage()`` starts reading, so that a peer that reads nothing holds the
/// coordinator back as a socket's would.
final class InMemoryLink: TestLink {
    let connection: InMemoryConnection
    private let started = Atomic<Bool>(false)
    /// Messages received and not taken, whether the connection ended, and a reader waiting.
    private let state = Mutex<(messages: [WireMessage], finished: Bool, reader: CheckedContinuation<WireMessage?, Never>?)>(
        ([], false, nil))

    /// Wraps `connection`, set up on its loop.
    init(_ connection: InMemoryConnection) async throws {
        self.connection = connection
        try await connection.loop.submit { [self] in
            connection.onMessage = { [self] message in arrived(message) }
            connection.whenEnded { [self] _ in arrived(nil) }
        }
    }

    /// Hands `message` (nil: the end) to the waiting reader, or keeps it.
    private func arrived(_ message: WireMessage?) {
        let reader = state.withLock { state -> CheckedContinuation<WireMessage?, Never>? in
            if let reader = state.reader, state.messages.isEmpty {
                state.reader = nil
                if message == nil { state.finished = true }
                return reader
            }
            if let message { state.messages.append(message) } else { state.finished = true }
            return nil
        }
        reader?.resume(returning: message)
    }

    func send(_ message: WireMessage) async throws {
        try await connection.loop.submit { [connection] in try connection.send(message) }
    }

    /// The next message; one task at a time may await it.
    func nextMessage() async throws -> WireMessage? {
        if !started.exchange(true, ordering: .relaxed) {
            try await connection.loop.submit { [connection] in connection.start() }
        }
        return await withCheckedContinuation { reader in
            let now = state.withLock { state -> WireMessage?? in
                if !state.messages.isEmpty { return .some(state.messages.removeFirst()) }
                if state.finished { return .some(nil) }
                state.reader = reader
                return .none
            }
            if let now { reader.resume(returning: now) }
        }
    }

    func close() async {
        _ = try? await connection.loop.submit { [connection] in connection.close() }
    }
}
