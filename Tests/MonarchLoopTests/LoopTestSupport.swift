import Foundation
import MonarchLoop
import MonarchTransport
import MonarchWire
import Synchronization
import Testing
@_exported import TestWaiting

/// Runs `body` with a fresh loop, then shuts the loop down and checks that the body closed
/// every handle it opened and that libuv closed the loop cleanly.
func withLoop<T>(_ body: (EventLoop) async throws -> T) async throws -> T {
    let loop = try EventLoop(name: "test-loop")
    let result: T
    do {
        result = try await body(loop)
    } catch {
        loop.shutdown()
        throw error
    }
    let report = loop.shutdown()
    #expect(report.handlesLeftOpen == 0, "handles left open")
    #expect(report.loopClosed, "uv_loop_close failed")
    return result
}

/// A fresh Unix socket path in the temporary directory.
func temporarySocketPath() -> String {
    "/tmp/monarch-test-\(UUID().uuidString.prefix(12)).sock"
}

/// The two transports, for tests that run on both.
enum TestTransport: String, CaseIterable, Sendable {
    case tcp, unix

    var listenAddress: SocketAddress {
        switch self {
        case .tcp: .tcp(host: "127.0.0.1", port: 0)
        case .unix: .unix(path: temporarySocketPath())
        }
    }
}

/// A listener whose accepted connections arrive as async frame connections.
struct TestServer: Sendable {
    let listener: Listener
    let connections: AsyncStream<AsyncFrameConnection>

    /// The address clients connect to.
    var address: SocketAddress { listener.boundAddress }

    static func start(on loop: EventLoop, at address: SocketAddress, maxFrameBytes: Int = FrameDecoder.defaultMaxFrameBytes)
        async throws -> TestServer
    {
        let (connections, continuation) = AsyncStream.makeStream(of: AsyncFrameConnection.self)
        let listener = try await loop.submit {
            try Listener(address: address, on: loop) { stream in
                continuation.yield(AsyncFrameConnection(FrameConnection(stream: stream, maxFrameBytes: maxFrameBytes)))
            }
        }
        return TestServer(listener: listener, connections: connections)
    }

    /// The next accepted connection.
    func accept() async throws -> AsyncFrameConnection {
        var iterator = connections.makeAsyncIterator()
        guard let connection = await iterator.next() else { throw CancellationError() }
        return connection
    }

    func stop() async {
        await listener.closeAndWait()
    }
}

/// Runs `body` with a client connected to a fresh server at `address` and the server's end of
/// that connection (`peer`), both with the given frame limit; afterwards closes both ends and
/// the server, whether `body` threw or not.
func withConnectedPair<T>(
    on loop: EventLoop, at address: SocketAddress, maxFrameBytes: Int = FrameDecoder.defaultMaxFrameBytes,
    _ body: (_ client: AsyncFrameConnection, _ peer: AsyncFrameConnection) async throws -> T
) async throws -> T {
    let server = try await TestServer.start(on: loop, at: address, maxFrameBytes: maxFrameBytes)
    var opened: [AsyncFrameConnection] = []
    func closeEverything() async {
        for connection in opened { await connection.close() }
        await server.stop()
    }
    do {
        let client = try await AsyncFrameConnection.connect(to: server.address, on: loop, maxFrameBytes: maxFrameBytes)
        opened.append(client)
        let peer = try await server.accept()
        opened.append(peer)
        let result = try await body(client, peer)
        await closeEverything()
        return result
    } catch {
        await closeEverything()
        throw error
    }
}

/// Messages a test server received, in order.
final class MessageLog: Sendable {
    private let messages = Mutex<[WireMessage]>([])

    func append(_ message: WireMessage) { messages.withLock { $0.append(message) } }
    var all: [WireMessage] { messages.withLock { $0 } }
}

/// Starts a listener on a fresh Unix socket whose connections record every message in `log`
/// and answer each ping with a pong, on the loop-level API.
func startPongServer(on loop: EventLoop, recordingIn log: MessageLog = MessageLog()) async throws -> Listener {
    try await loop.submit {
        try Listener(address: .unix(path: temporarySocketPath()), on: loop) { stream in
            let connection = FrameConnection(stream: stream)
            connection.onMessage = { message in
                log.append(message)
                if case .ping(let ping) = message { try? connection.send(.pong(PongMessage(id: ping.id))) }
            }
            connection.start()
        }
    }
}

extension AsyncFrameConnection {
    /// Writes raw bytes, bypassing framing, to feed the peer malformed input.
    func sendRaw(_ bytes: [UInt8]) async throws {
        let connection = self.connection
        try await loop.submit { connection.stream.write(bytes) }
    }
}
