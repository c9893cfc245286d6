import Foundation
import MonarchLoop
import MonarchTransport
import MonarchWire
import Synchronization
import Testing

/// What one end of an in-memory pair saw: its messages, its end, its writability changes
/// (with what was queued at each).
private final class EndRecord: Sendable {
    private let state = Mutex<(messages: [WireMessage], end: InMemoryConnection.End?, writability: [(Bool, Int)])>(([], nil, []))

    var messages: [WireMessage] { state.withLock { $0.messages } }
    var end: InMemoryConnection.End? { state.withLock { $0.end } }
    var writability: [Bool] { state.withLock { $0.writability.map(\.0) } }
    var queuedAtWritability: [Int] { state.withLock { $0.writability.map(\.1) } }

    /// Records what `connection` reports. Loop thread.
    func watch(_ connection: InMemoryConnection) {
        connection.onMessage = { message in self.state.withLock { $0.messages.append(message) } }
        connection.onEnd = { end in self.state.withLock { $0.end = end } }
        connection.onWritabilityChanged = { [unowned connection] writable in
            let queued = connection.queuedWriteBytes
            self.state.withLock { $0.writability.append((writable, queued)) }
        }
    }
}

/// A pair on `loop` with each end watched; `started` ends read from the start.
private func watchedPair(on loop: EventLoop, started: Bool = true) async throws
    -> (InMemoryConnection, EndRecord, InMemoryConnection, EndRecord)
{
    let (a, b) = InMemoryConnection.pair(on: loop)
    let (recordA, recordB) = (EndRecord(), EndRecord())
    try await loop.submit {
        recordA.watch(a)
        recordB.watch(b)
        if started {
            a.start()
            b.start()
        }
    }
    return (a, recordA, b, recordB)
}

@Suite struct InMemoryConnectionTests {
    @Test("Messages arrive in the order they were sent, each end to the other, never inside the send")
    func order() async throws {
        try await withLoop { loop in
            let (a, recordA, b, recordB) = try await watchedPair(on: loop)
            let deliveredInside = try await loop.submit {
                for index in 0..<200 { try a.send(.request(RequestMessage(id: MessageID(index), path: "items/\(index)"))) }
                return recordB.messages.count
            }
            #expect(deliveredInside == 0, "nothing is delivered inside the sender's call")
            try await eventually("200 requests") { recordB.messages.count == 200 }
            #expect(recordB.messages == (0..<200).map { .request(RequestMessage(id: MessageID($0), path: "items/\($0)")) })
            try await loop.submit {
                for index in (0..<200).reversed() { try b.send(.response(ResponseMessage(id: MessageID(index), status: 200))) }
            }
            try await eventually("200 responses") { recordA.messages.count == 200 }
            #expect(recordA.messages.map(\.id) == (0..<200).reversed().map { MessageID($0) })
            try await loop.submit { a.close() }
            try await eventually("both ends to end") { recordA.end != nil && recordB.end != nil }
        }
    }

    @Test("Writability turns false above the high watermark while the peer reads nothing, and true again at the low one")
    func backPressure() async throws {
        try await withLoop { loop in
            let (a, recordA, b, recordB) = try await watchedPair(on: loop, started: false)
            let body = Data(repeating: 0x61, count: 3_000)
            let size = InMemoryConnection.estimatedSize(of: .response(ResponseMessage(id: 0, status: 200, body: body)))
            let (writableAfter, queued) = try await loop.submit {
                a.writeHighWatermark = 10 * size
                a.writeLowWatermark = 4 * size
                var writableAfter: [Bool] = []
                for index in 0..<20 {
                    try a.send(.response(ResponseMessage(id: MessageID(index), status: 200, body: body)))
                    writableAfter.append(a.isWritable)
                }
                return (writableAfter, a.queuedWriteBytes)
            }
            #expect(writableAfter == Array(repeating: true, count: 10) + Array(repeating: false, count: 10))
            #expect(queued == 20 * size, "everything waits for the peer")
            #expect(recordA.writability == [false])
            // A delivery the sends scheduled runs on the loop before it next waits (its local
            // work), so before this round trip from another thread: none has come by then.
            #expect(try await loop.submit { recordB.messages.isEmpty }, "an end not started reads nothing")
            try await loop.submit { b.start() }
            try await eventually("the 20 responses") { recordB.messages.count == 20 }
            #expect(recordB.messages.map(\.id) == (0..<20).map { MessageID($0) })
            #expect(recordA.writability == [false, true])
            #expect(recordA.queuedAtWritability == [11 * size, 4 * size], "false above the high, true at the low watermark")
            #expect(try await loop.submit { a.isWritable && a.queuedWriteBytes == 0 })
            // Paused again, it holds the sender back again.
            try await loop.submit {
                b.pause()
                for index in 20..<32 { try a.send(.response(ResponseMessage(id: MessageID(index), status: 200, body: body))) }
            }
            #expect(recordA.writability == [false, true, false])
            try await loop.submit { b.resume() }
            try await eventually("the rest") { recordB.messages.count == 32 }
            #expect(recordA.writability == [false, true, false, true])
            try await loop.submit { b.close() }
            try await eventually("both ends to end") { recordA.end != nil && recordB.end != nil }
        }
    }

    @Test("A closing end's messages still reach the peer, which then ends; nothing is sent after the close")
    func closeFromTheSender() async throws {
        try await withLoop { loop in
            let (a, recordA, b, recordB) = try await watchedPair(on: loop)
            let openAfterClose = try await loop.submit {
                for index in 0..<3 { try a.send(.ping(PingMessage(id: MessageID(index)))) }
                a.close()
                try a.send(.ping(PingMessage(id: 99)))
                return a.isOpen
            }
            #expect(!openAfterClose)
            try await eventually("both ends to end") { recordA.end != nil && recordB.end != nil }
            #expect(recordB.messages.map(\.id) == [0, 1, 2])
            #expect(recordA.end == .closed && recordB.end == .closed)
            #expect(try await loop.submit { !b.isOpen })
        }
    }

    @Test("A receiver that closes drops what it did not read, frees the sender's queue and ends the sender; close works from any thread")
    func closeFromTheReceiver() async throws {
        try await withLoop { loop in
            let (a, recordA, b, recordB) = try await watchedPair(on: loop, started: false)
            try await loop.submit {
                a.start()
                for index in 0..<5 { try a.send(.ping(PingMessage(id: MessageID(index)))) }
            }
            #expect(try await loop.submit { a.queuedWriteBytes } > 0)
            b.close()  // off the loop's thread
            try await eventually("both ends to end") { recordA.end != nil && recordB.end != nil }
            #expect(recordB.messages.isEmpty)
            #expect(recordA.end == .closed && recordB.end == .closed)
            #expect(try await loop.submit { a.queuedWriteBytes == 0 && !a.isOpen })
        }
    }

    @Test("A failed connection tells the peer in an error message, then both end")
    func fail() async throws {
        try await withLoop { loop in
            let (a, recordA, _, recordB) = try await watchedPair(on: loop)
            let error = ProtocolError(.unexpectedMessage, "not here", id: 7)
            try await loop.submit { a.fail(error) }
            try await eventually("both ends to end") { recordA.end != nil && recordB.end != nil }
            #expect(recordB.messages == [.error(error.errorMessage)])
            #expect(recordA.end == .protocolError(error))
            #expect(recordB.end == .closed)
        }
    }

    @Test("A prepared response arrives as its message with the request's id and the age given")
    func preparedResponse() async throws {
        try await withLoop { loop in
            let (a, _, b, recordB) = try await watchedPair(on: loop)
            let aged = PreparedResponse(ResponseMessage(
                id: 0, status: 200, source: "cache", headers: ["etag": "\"x\""], body: Data("hello".utf8), ageMs: 0))
            let ageless = PreparedResponse(ResponseMessage(id: 0, status: 200, body: Data("plain".utf8)))
            try await loop.submit {
                try a.send(aged, answering: 42, ageMs: 1_500)
                try a.send(aged, answering: 43, ageMs: nil)
                try a.send(ageless, answering: 44, ageMs: 9)
            }
            try await eventually("three responses") { recordB.messages.count == 3 }
            var expected = aged.message
            expected.id = 42
            expected.ageMs = 1_500
            #expect(recordB.messages[0] == .response(expected))
            expected.id = 43
            expected.ageMs = 0
            #expect(recordB.messages[1] == .response(expected), "no age given: the message's own")
            var plain = ageless.message
            plain.id = 44
            #expect(recordB.messages[2] == .response(plain), "a message without an age gets none")
            try await loop.submit { b.close() }
        }
    }
}
