import Foundation
import MonarchLoop
import MonarchWire
import Testing

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

extension AsyncFrameConnection {
    /// Writes raw bytes, bypassing framing, to feed the peer malformed input.
    func sendRaw(_ bytes: [UInt8]) async throws {
        let connection = self.connection
        try await loop.submit { connection.stream.write(bytes) }
    }
}
