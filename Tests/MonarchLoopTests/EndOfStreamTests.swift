import Foundation
import MonarchLoop
import MonarchWire
import Testing

/// What a connection does when its peer stops writing: replies still go out, and a frame cut
/// short by the end of the stream is answered with an error message.
@Suite struct EndOfStreamTests {
    /// Every message in `bytes`, which must be whole frames.
    private func messages(in bytes: [UInt8]) throws -> [WireMessage] {
        var decoder = FrameDecoder()
        decoder.append(contentsOf: bytes)
        var messages: [WireMessage] = []
        while let frame = try decoder.nextFrame() {
            messages.append(try MessageCodec().decode(frame))
        }
        try decoder.finish()
        return messages
    }

    @Test func repliesReachAPeerThatStoppedWriting() async throws {
        try await withLoop { loop in
            let listener = try await startPongServer(on: loop)
            guard case .unix(let path) = listener.boundAddress else { throw CancellationError() }
            let codec = MessageCodec()
            let requests = try (1...3).flatMap { try codec.encodeFrame(.ping(PingMessage(id: MessageID($0)))) }
            let reply = try await RawSocketClient.exchange(path: path, sending: requests)
            #expect(try messages(in: reply) == (1...3).map { .pong(PongMessage(id: MessageID($0))) })
            await listener.closeAndWait()
        }
    }

    @Test func aFrameCutShortByTheEndIsAnsweredWithAnError() async throws {
        try await withLoop { loop in
            let listener = try await startPongServer(on: loop)
            guard case .unix(let path) = listener.boundAddress else { throw CancellationError() }
            let ping = try MessageCodec().encodeFrame(.ping(PingMessage(id: 7)))
            // A whole ping, then a frame announcing ten bytes that brings only one.
            let reply = try await RawSocketClient.exchange(path: path, sending: ping + [0, 0, 0, 10, 0x7b])
            let received = try messages(in: reply)
            #expect(received.count == 2)
            #expect(received.first == .pong(PongMessage(id: 7)))
            guard case .error(let error)? = received.last else {
                Issue.record("expected an error message after the pong, got \(received)")
                return
            }
            #expect(error.code == .truncatedFrame)
            await listener.closeAndWait()
        }
    }
}
