#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Logging
import Monarch
import MonarchConfig
@testable import MonarchCoordinator
import MonarchLoop
import MonarchTransport
import MonarchWire
import Synchronization
import Testing
@_exported import TestWaiting

/// A coordinator running in the test process, its clients and workers connected to it in
/// process: the whole pipeline — sessions, routing, flights, pools, failover — and no process
/// started. Workers, and clients that ask for it, send real frames over socket pairs
/// (``Coordinator/connectInProcess(as:)``); other clients pass messages in memory
/// (``Coordinator/attachInMemoryClient(token:)``).
struct InProcessCluster: Sendable {
    /// The coordinator's loop: ``CoordinatorActor/loop``, shared by every test in the process.
    let loop: EventLoop
    /// The loop the test's clients and workers run on.
    let peers: EventLoop
    let coordinator: Coordinator

    /// Runs `body` against a coordinator with `yaml`'s domains, routes and limits (its
    /// `listen` section is filled in and never bound), reading the time on `clock` (and, for
    /// its hot tier, `wallClock`), then shuts everything down.
    static func with(
        _ yaml: String, clock: MonotonicClock = .system, wallClock: WallClock = .system,
        _ body: @Sendable (InProcessCluster) async throws -> Void
    ) async throws {
        var parsed = try Configuration.parse(
            yaml: "listen: { clients: unix:/nonexistent/c.sock, workers: unix:/nonexistent/w.sock }\n" + yaml,
            baseDirectory: "/tmp", fileName: "in-process.yml", environment: [:])
        // The scripted workers answer pings from tasks on the shared pool, which a loaded test
        // run can keep from running for seconds: the coordinator would rightly find them
        // silent. Heartbeats and hello timeouts are tested with real processes; here they
        // wait, unless a test asks for them.
        // Hellos likewise: a loaded run can hold the tasks that send them back for seconds.
        if !yaml.contains("heartbeat") { parsed.limits.heartbeat = .seconds(60) }
        if !yaml.contains("helloTimeout") { parsed.limits.helloTimeout = .seconds(120) }
        let configuration = parsed
        // As in `monarch up` (ProcessSetup.start): a peer that went away is an error on the
        // write, not a SIGPIPE that kills the test process (a coordinator writing to a client
        // socket the test closed did, now and then).
        signal(SIGPIPE, SIG_IGN)
        let loop = CoordinatorActor.loop
        let peers = try EventLoop(name: "peers")
        let logger = { var logger = Logger(label: "in-process"); logger.logLevel = .critical; return logger }()
        let coordinator = try await CoordinatorActor.run {
            let coordinator = try Coordinator(configuration: configuration, logger: logger, clock: clock, wallClock: wallClock)
            try coordinator.startTimers()
            return coordinator
        }
        let cluster = InProcessCluster(loop: loop, peers: peers, coordinator: coordinator)
        let outcome: Result<Void, any Error>
        do {
            try await body(cluster)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        await cluster.close()
        _ = peers.shutdown()
        let ended = await cluster.connectionsEnded()
        ClosedCoordinators.keep(coordinator)
        try outcome.get()
        #expect(ended, "a closed coordinator's client and worker connections all end")
    }

    /// Whether every client and worker connection of the coordinator has ended (within 20 s).
    private func connectionsEnded() async -> Bool {
        do {
            try await eventually("the coordinator's connections to end") {
                await CoordinatorActor.run {
                    coordinator.clients.isEmpty && coordinator.pools.values.allSatisfy { $0.workers.isEmpty }
                }
            }
            return true
        } catch {
            return false
        }
    }

    private func close() async {
        await CoordinatorActor.run { coordinator.close() }
    }

    /// A new connection of `role`, said hello to and welcomed, using what its welcome agreed to.
    func connect(as role: Hello.Role, hello: Hello? = nil) async throws -> AsyncFrameConnection {
        let socket = try await CoordinatorActor.run { try coordinator.connectInProcess(as: role) }
        let connection = try await peers.submit {
            AsyncFrameConnection(FrameConnection(stream: try StreamConnection.open(socket: socket, on: peers)))
        }
        try await connection.send(.hello(hello ?? Hello(role: role)))
        guard case .welcome(let welcome)? = try await connection.nextMessage() else {
            throw InProcessError("the coordinator did not welcome the \(role.rawValue)")
        }
        try await connection.adopt(welcome)
        return connection
    }

    /// A client connected over `transport` (over the socket pair when it offers `features` in its
    /// hello); unless `reading`, it reads nothing after the welcome until
    /// ``TestClient/startReading()``.
    func client(features: [String]? = nil, reading: Bool = true, over transport: PeerTransport = .inMemory) async throws
        -> TestClient
    {
        if transport == .socket || features != nil {
            return TestClient(
                connection: try await connect(as: .client, hello: Hello(role: .client, features: features)), reading: reading)
        }
        let end = try await CoordinatorActor.run { try coordinator.attachInMemoryClient() }
        return TestClient(connection: try await InMemoryLink(end), reading: reading)
    }

    /// A worker of `kind` called `name`, offering `features` in its hello, registered once this
    /// returns; unless `answersPings`, it never answers a ping. Over a socket pair unless
    /// `transport` says in memory (where its welcome is taken here, and must name it).
    func worker(
        kind: String, name: String, capacity: Int? = nil, features: [String]? = nil, answersPings: Bool = true,
        over transport: PeerTransport = .socket
    ) async throws -> ScriptedWorker {
        let before = await CoordinatorActor.run { coordinator.pools[kind]?.workers.count ?? 0 }
        let hello = Hello(role: .worker, kind: kind, capacity: capacity, pid: 1, name: name, features: features)
        let connection: any TestLink
        switch transport {
        case .socket:
            connection = try await connect(as: .worker, hello: hello)
        case .inMemory:
            let link = try await InMemoryLink(try await CoordinatorActor.run { try coordinator.attachInMemoryWorker(hello) })
            guard case .welcome(let welcome)? = try await link.nextMessage(), welcome.workerId == name else {
                throw InProcessError("the coordinator did not welcome the in-memory worker \(name) by its name")
            }
            connection = link
        }
        let worker = ScriptedWorker(connection: connection, answersPings: answersPings)
        try await eventually("\(name) to register") {
            await CoordinatorActor.run { coordinator.pools[kind]?.workers.count ?? 0 } > before
        }
        return worker
    }
}

/// The coordinators the tests closed, kept for as long as the process runs: the loop they
/// ran on outlives each test, and a callback that comes late to a closed connection (a
/// background write-back ending, a close completing) still reaches its coordinator.
enum ClosedCoordinators {
    private static let kept = Mutex<[Coordinator]>([])

    static func keep(_ coordinator: Coordinator) { kept.withLock { $0.append(coordinator) } }
}

/// How a test's client or worker reaches the coordinator.
enum PeerTransport: Sendable {
    /// In memory (``Coordinator/attachInMemoryClient(token:)``,
    /// ``Coordinator/attachInMemoryWorker(_:)``): messages passed as values, no hello on the
    /// connection (a client earns the role a hello without a secret earns; a worker is admitted
    /// with the hello it is given).
    case inMemory
    /// Frames on a socket pair (``Coordinator/connectInProcess(as:)``), hello and all.
    case socket
}

/// A client speaking the wire protocol, one exchange id after the other.
extension InProcessCluster {
    /// The configuration most in-process tests run: domain `docs`, a cache in front of a
    /// bundle, for every path, answers kept 60 s.
    static let cachedDocs = """
        domains:
          docs: [cache, bundle]
        routes:
          - match: "..."
            domain: docs
            ttl: 60s
        """
}

/// The body of a `response` as text; nil for any other message.
func text(_ message: WireMessage) -> String? {
    guard case .response(let response) = message else { return nil }
    return response.body.map { String(decoding: $0, as: UTF8.self) }
}

/// The error code of a `failure`; nil for any other message.
func code(_ message: WireMessage) -> FailureCode? {
    guard case .failure(let failure) = message else { return nil }
    return failure.error.code
}

final class TestClient: Sendable {
    let connection: any TestLink
    private let answers = Inbox()
    private let readingStarts: AsyncStream<Void>.Continuation

    init(connection: any TestLink, reading: Bool = true) {
        self.connection = connection
        let answers = answers
        let (start, starts) = AsyncStream<Void>.makeStream()
        readingStarts = starts
        if reading { starts.finish() }
        Task {
            for await _ in start {}
            while let message = try? await connection.nextMessage() {
                // An in-memory client's welcome comes with its answers.
                if case .welcome = message { continue }
                answers.put(message)
            }
            answers.finish()
        }
    }

    /// Starts reading answers (a client made not reading).
    func startReading() {
        readingStarts.finish()
    }

    /// Sends `request`.
    func send(_ request: RequestMessage) async throws {
        try await connection.send(.request(request))
    }

    /// Sends any message.
    func send(_ message: WireMessage) async throws {
        try await connection.send(message)
    }

    /// Sends a frame holding `payload` (a client over the socket pair only).
    func send(payload: [UInt8]) async throws {
        guard let frames = connection as? AsyncFrameConnection else { throw InProcessError("an in-memory client sends no frames") }
        try await frames.send(payload: payload)
    }

    /// The answer to request `id` (answers to others are kept for later).
    func answer(_ id: MessageID) async throws -> WireMessage {
        try await answers.take(timeout: 30) { $0.id == id }
    }

    /// The next message `matches` accepts (others are kept for later).
    func next(where matches: @Sendable @escaping (WireMessage) -> Bool) async throws -> WireMessage {
        try await answers.take(timeout: 30, where: matches)
    }

    /// Whether the coordinator closed the connection (within `timeout` seconds).
    func closed(within timeout: Double = 30) async -> Bool {
        await answers.finished(within: timeout)
    }
}

/// Messages received, taken in any order by a predicate.
final class Inbox: Sendable {
    private let state = Mutex<(messages: [WireMessage], finished: Bool)>(([], false))

    func put(_ message: WireMessage) { state.withLock { $0.messages.append(message) } }
    func finish() { state.withLock { $0.finished = true } }
    var pending: [WireMessage] { state.withLock { $0.messages } }

    func take(timeout: Double, where matches: @Sendable (WireMessage) -> Bool) async throws -> WireMessage {
        let end = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < end {
            let found = state.withLock { state -> (WireMessage?, Bool) in
                guard let index = state.messages.firstIndex(where: matches) else { return (nil, state.finished) }
                return (state.messages.remove(at: index), state.finished)
            }
            if let message = found.0 { return message }
            if found.1 { throw InProcessError("the connection closed") }
            try await Task.sleep(for: .milliseconds(2))
        }
        throw InProcessError("nothing matching within \(timeout) s; pending: \(pending.map(\.type))")
    }

    func finished(within timeout: Double) async -> Bool {
        let end = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < end {
            if state.withLock({ $0.finished }) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return false
    }
}

struct InProcessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
