import Foundation
import MonarchLoop
import MonarchTransport
import MonarchWire
import Testing

/// Both ends of an in-memory pair on `loop`, each wrapped for async code.
private func asyncPair(on loop: EventLoop) async throws -> (AsyncMessageConnection, AsyncMessageConnection) {
    let (a, b) = InMemoryConnection.pair(on: loop)
    return try await loop.submit { (AsyncMessageConnection(a), AsyncMessageConnection(b)) }
}

/// A response whose estimated frame is about `kib` KiB.
private func bulky(_ id: Int, kib: Int) -> WireMessage {
    .response(ResponseMessage(id: MessageID(id), status: 200, body: Data(repeating: 7, count: kib << 10)))
}

/// ``AsyncMessageConnection`` over in-memory ends: the promises of ``AsyncFrameConnection``,
/// kept over any ``MessageConnection``.
@Suite struct AsyncMessageConnectionTests {
    @Test("Messages sent from other tasks arrive in order; after the peer closes, the reader gets them all, then nil, and a send throws closed")
    func orderAndEnd() async throws {
        try await withLoop { loop in
            let (a, b) = try await asyncPair(on: loop)
            for index in 0..<300 { try await a.send(.request(RequestMessage(id: MessageID(index), path: "items/\(index)"))) }
            a.close()
            var received: [WireMessage] = []
            while let message = try await b.nextMessage() { received.append(message) }
            #expect(received == (0..<300).map { .request(RequestMessage(id: MessageID($0), path: "items/\($0)")) })
            await #expect(throws: ConnectionEnd.closed) { try await b.send(.ping(PingMessage())) }
        }
    }

    @Test("A reader that falls behind pauses its end, so the sender's end turns unwritable; reading everything makes it writable again, nothing lost")
    func readerBackPressure() async throws {
        try await withLoop { loop in
            let (a, b) = try await asyncPair(on: loop)
            // 64 KiB bodies: the reader's 4 MiB buffer, then the sending end's 1 MiB queue, fill.
            var sent = 0
            while try await loop.submit({ a.connection.isWritable }) {
                try await a.send(bulky(sent, kib: 64))
                sent += 1
                #expect(sent < 500, "the sender was never held back")
                if sent >= 500 { return }
            }
            // Each counts about 87 KiB: some 48 fill the reader's 4 MiB, then 12 the end's 1 MiB.
            #expect((55...65).contains(sent), "the reader's buffer, then the end's queue, filled before the sender was held back (\(sent))")
            var read = 0
            while read < sent, case .response(let response)? = try await b.nextMessage() {
                #expect(response.id == MessageID(read))
                read += 1
            }
            #expect(read == sent)
            try await eventually("the sender's end writable again") { try await loop.submit { a.connection.isWritable } }
        }
    }

    @Test("A sender waiting while its end is not writable is released by cancelling its task")
    func cancellingAWaitingSender() async throws {
        try await withLoop { loop in
            let (a, _) = try await asyncPair(on: loop)
            let writer = Task {
                var index = 0
                while true {
                    try await a.send(bulky(index, kib: 64))
                    index += 1
                }
            }
            try await eventually("the sender's end to turn unwritable") { try await !loop.submit { a.connection.isWritable } }
            writer.cancel()
            await #expect(throws: CancellationError.self) { try await writer.value }
        }
    }

    @Test("Messages taken on the loop are acted on there, in order, and never reach the reader; the others, and the end, still do")
    func messagesTakenOnTheLoopSkipTheReader() async throws {
        try await withLoop { loop in
            let (a, b) = try await asyncPair(on: loop)
            let taken = MessageLog()
            try await loop.submit {
                b.takeMessagesOnLoop { message in
                    guard case .cancel = message else { return false }
                    loop.preconditionInEventLoop()
                    taken.append(message)
                    return true
                }
            }
            for id in 1...4 {
                try await a.send(id.isMultiple(of: 2) ? .ping(PingMessage(id: MessageID(id))) : .cancel(CancelMessage(id: MessageID(id))))
            }
            a.close()
            #expect(try await b.nextMessage() == .ping(PingMessage(id: 2)))
            #expect(try await b.nextMessage() == .ping(PingMessage(id: 4)))
            #expect(try await b.nextMessage() == nil)
            #expect(taken.all == [.cancel(CancelMessage(id: 1)), .cancel(CancelMessage(id: 3))])
        }
    }

    @Test("A message is sent at once only on the loop with the connection writable; otherwise nothing is sent")
    func sendAtOnce() async throws {
        try await withLoop { loop in
            let (a, b) = try await asyncPair(on: loop)
            #expect(try a.sendAtOnce(.ping(PingMessage(id: 1))) == false, "off the loop")
            #expect(try await loop.submit { try a.sendAtOnce(.ping(PingMessage(id: 2))) })
            #expect(try await b.nextMessage() == .ping(PingMessage(id: 2)))
            // Fill the sending end until it turns unwritable: then nothing goes at once.
            var index = 0
            while try await loop.submit({ a.connection.isWritable }) {
                try await a.send(bulky(index, kib: 64))
                index += 1
            }
            #expect(try await loop.submit { try a.sendAtOnce(.ping(PingMessage(id: 3))) } == false, "while not writable")
            a.close()
            var pings = 0
            while let message = try await b.nextMessage() { if case .ping = message { pings += 1 } }
            #expect(pings == 0, "nothing more than the first ping was sent")
        }
    }

    @Test("A message sent off the loop on a framed connection is encoded by the sender: one too large for a frame throws there, and the connection goes on")
    func oversizedOnAFrame() async throws {
        try await withLoop { loop in
            try await withConnectedPair(on: loop, at: .unix(path: temporarySocketPath()), maxFrameBytes: 64 << 10) { client, peer in
                let framed = try await loop.submit { AsyncMessageConnection(client.connection) }
                await #expect(throws: FrameError.self) { try await framed.send(bulky(1, kib: 100)) }
                try await framed.send(.ping(PingMessage(id: 2)))
                #expect(try await peer.nextMessage() == .ping(PingMessage(id: 2)))
            }
        }
    }
}
