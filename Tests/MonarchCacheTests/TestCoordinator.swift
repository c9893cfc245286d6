import MonarchLoop
import MonarchTransport
import MonarchWire
import MonarchWorker
import TestWorkerHarness
import Testing

/// The coordinator's side of one worker connection, played by a test: a real
/// ``WorkerRuntime`` dials a listener in the fixture's folder over a Unix socket.
struct TestCoordinator {
    /// The worker's connection.
    let worker: AsyncFrameConnection
    /// The hello the worker sent.
    let hello: Hello
    let serving: Task<Void, any Error>
    let played: PlayedCoordinator

    /// Starts `runtime` against a listener in `fixture`'s folder and answers its hello with
    /// `welcome`.
    static func connect(_ runtime: WorkerRuntime, _ fixture: CacheFixture, welcome: Welcome = Welcome()) async throws -> TestCoordinator {
        let played = try await PlayedCoordinator(in: fixture.folder, on: fixture.loop)
        let serving = Task { try await runtime.run(coordinator: played.address) }
        let (worker, hello) = try await played.welcomeNextWorker(welcome)
        return TestCoordinator(worker: worker, hello: hello, serving: serving, played: played)
    }

    /// Closes the connection, waits for the runtime to return, closes the listener.
    func finish() async throws {
        await worker.close()
        try await serving.value
        await played.close()
    }
}
