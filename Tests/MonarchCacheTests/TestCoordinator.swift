import MonarchLoop
import MonarchTransport
import MonarchWire
import MonarchWorker
import Testing

/// The coordinator's side of one worker connection, played by a test: a real
/// ``WorkerRuntime`` dials a listener in the fixture's folder over a Unix socket.
struct TestCoordinator {
    /// The worker's connection.
    let worker: AsyncFrameConnection
    /// The hello the worker sent.
    let hello: Hello
    let serving: Task<Void, any Error>
    let listener: Listener

    /// Starts `runtime` against a listener in `fixture`'s folder and answers its hello with
    /// `welcome`.
    static func connect(_ runtime: WorkerRuntime, _ fixture: CacheFixture, welcome: Welcome = Welcome()) async throws -> TestCoordinator {
        let loop = fixture.loop
        let (accepted, continuation) = AsyncStream.makeStream(of: AsyncFrameConnection.self)
        let address = SocketAddress.unix(path: fixture.folder + "/coordinator.sock")
        let listener = try await loop.submit {
            try Listener(address: address, on: loop) { stream in
                continuation.yield(AsyncFrameConnection(FrameConnection(stream: stream)))
            }
        }
        let serving = Task { try await runtime.run(coordinator: address) }
        var connections = accepted.makeAsyncIterator()
        let worker = try #require(await connections.next())
        guard case .hello(let hello)? = try await worker.nextMessage() else { throw TestFailure("expected a hello") }
        try await worker.send(.welcome(welcome))
        return TestCoordinator(worker: worker, hello: hello, serving: serving, listener: listener)
    }

    /// Closes the connection, waits for the runtime to return, closes the listener.
    func finish() async throws {
        await worker.close()
        try await serving.value
        await listener.closeAndWait()
    }

    private struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
