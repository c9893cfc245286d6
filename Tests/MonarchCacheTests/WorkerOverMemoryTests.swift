import Foundation
import Monarch
import MonarchLoop
import MonarchTransport
import MonarchWire
import MonarchWorker
import Testing

/// Echoes a request's path as its body; `missing/...` is a miss.
private struct EchoPaths: RequestProvider {
    var name: String { "echo" }

    func perform(_ request: Request) async -> ProviderOutcome {
        if request.path.hasPrefix("missing/") { return .miss(reason: "asked to miss") }
        return .response(Response(body: Data(request.path.utf8)))
    }
}

/// A real ``WorkerRuntime`` served over the transport seam with no socket: the test plays the
/// coordinator on the other end of an in-memory pair.
@Suite struct WorkerOverMemoryTests {
    /// The worker says hello, takes the welcome, answers requests, pings and status, and
    /// returns once the coordinator's end closes: the same exchange as over a socket.
    @Test(.timeLimit(.minutes(1)))
    func aWorkerServesOverAnInMemoryConnection() async throws {
        try await withCacheFixture { fixture in
            let loop = fixture.loop
            let runtime = WorkerRuntime(
                identity: WorkerIdentity(kind: "echo", name: "echo-1"), provider: EchoPaths(), loop: loop,
                logger: fixture.logs.logger)
            let (workerEnd, coordinatorEnd) = InMemoryConnection.pair(on: loop)
            let (worker, coordinator) = try await loop.submit {
                (AsyncMessageConnection(workerEnd), AsyncMessageConnection(coordinatorEnd))
            }
            let serving = Task { try await runtime.serve(over: worker, coordinator: "memory") }

            guard case .hello(let hello)? = try await coordinator.nextMessage() else {
                Issue.record("expected the worker's hello")
                return
            }
            #expect(hello.role == .worker)
            #expect(hello.kind == "echo")
            try await coordinator.send(.welcome(Welcome(maxFrameBytes: 1 << 20)))

            try await coordinator.send(.request(RequestMessage(id: 1, path: "items/7")))
            try await coordinator.send(.request(RequestMessage(id: 2, path: "missing/8")))
            var answers: [MessageID: WireMessage] = [:]
            while answers.count < 2, let message = try await coordinator.nextMessage() {
                if let id = message.id { answers[id] = message }
            }
            guard case .response(let response)? = answers[1] else {
                Issue.record("expected a response to 1, got \(String(describing: answers[1]))")
                return
            }
            #expect(response.body == Data("items/7".utf8))
            guard case .miss? = answers[2] else {
                Issue.record("expected a miss for 2, got \(String(describing: answers[2]))")
                return
            }
            try await coordinator.send(.ping(PingMessage(id: 3)))
            #expect(try await coordinator.nextMessage() == .pong(PongMessage(id: 3)))
            try await coordinator.send(.status(StatusMessage(id: 4)))
            guard case .result(let status)? = try await coordinator.nextMessage() else {
                Issue.record("expected the status result")
                return
            }
            #expect(status.data?["responses"] == .integer(1))
            #expect(status.data?["misses"] == .integer(1))
            #expect(runtime.limits.maxFrameBytes == 1 << 20)

            coordinator.close()
            try await serving.value
            #expect(runtime.counters.inFlight == 0)
        }
    }
}
