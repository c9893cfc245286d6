import MonarchLoop
import MonarchTransport
import MonarchWire

/// The coordinator's side of worker connections, played by a test: a listener on a Unix socket
/// in a folder, and the connections workers dial in on, each with the hello it opened with.
/// The test then answers the hello (a welcome, or a refusal) and speaks for the coordinator.
public struct PlayedCoordinator: Sendable {
    /// The worker address to give a worker (`--coordinator`, or ``WorkerRuntime/run(coordinator:)``).
    public let address: SocketAddress
    private let listener: Listener
    private let accepted: Accepted

    /// Listens on `coordinator.sock` in `folder`, on `loop`.
    public init(in folder: String, on loop: EventLoop) async throws {
        let accepted = Accepted()
        let address = SocketAddress.unix(path: folder + "/coordinator.sock")
        self.listener = try await loop.submit {
            try Listener(address: address, on: loop) { stream in
                accepted.continuation.yield(AsyncFrameConnection(FrameConnection(stream: stream)))
            }
        }
        self.address = address
        self.accepted = accepted
    }

    /// The next worker to dial in, and the hello it said, unanswered.
    ///
    /// - Throws: ``PlayedCoordinatorError`` when the listener closed first, or the worker's
    ///   first message is no hello.
    public func nextWorker() async throws -> (connection: AsyncFrameConnection, hello: Hello) {
        guard let connection = await accepted.next() else { throw PlayedCoordinatorError("the listener closed") }
        guard case .hello(let hello)? = try await connection.nextMessage() else {
            throw PlayedCoordinatorError("the worker's first message was no hello")
        }
        return (connection, hello)
    }

    /// The next worker to dial in, welcomed with `welcome`, and the hello it said.
    public func welcomeNextWorker(_ welcome: Welcome = Welcome()) async throws -> (connection: AsyncFrameConnection, hello: Hello) {
        let next = try await nextWorker()
        try await next.connection.send(.welcome(welcome))
        return next
    }

    /// Stops listening; the connections accepted stay open.
    public func close() async {
        await listener.closeAndWait()
        accepted.continuation.finish()
    }
}

/// The connections accepted, in order, for one reader after another.
private final class Accepted: Sendable {
    let stream: AsyncStream<AsyncFrameConnection>
    let continuation: AsyncStream<AsyncFrameConnection>.Continuation

    init() { (stream, continuation) = AsyncStream.makeStream(of: AsyncFrameConnection.self) }

    func next() async -> AsyncFrameConnection? {
        var iterator = stream.makeAsyncIterator()
        return await iterator.next()
    }
}

/// What went wrong with a played coordinator's worker connection.
public struct PlayedCoordinatorError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
