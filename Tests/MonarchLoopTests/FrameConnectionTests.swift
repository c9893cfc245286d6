import Foundation
import MonarchLoop
import MonarchTransport
import MonarchWire
import Synchronization
import Testing

@Suite struct FrameConnectionTests {
    @Test(arguments: TestTransport.allCases)
    func framesTravelBothWaysInOrder(_ transport: TestTransport) async throws {
        try await withLoop { loop in
            try await withConnectedPair(on: loop, at: transport.listenAddress) { client, peer in
                for index in 0..<200 {
                    try await client.send(.request(RequestMessage(id: MessageID(index), path: "items/\(index)")))
                }
                for index in 0..<200 {
                    let message = try await peer.nextMessage()
                    #expect(message == .request(RequestMessage(id: MessageID(index), path: "items/\(index)")))
                }
                // Replies may come in any order; the layer keeps the order they were sent in.
                for index in (0..<200).reversed() {
                    try await peer.send(.response(ResponseMessage(id: MessageID(index), status: 200)))
                }
                for index in (0..<200).reversed() {
                    #expect(try await client.nextMessage()?.id == MessageID(index))
                }
                await client.close()
                #expect(try await peer.nextFrame() == nil, "an orderly close ends the peer's frames")
            }
        }
    }

    @Test(arguments: TestTransport.allCases)
    func aLargeFrameArrivesWholeAcrossManyReads(_ transport: TestTransport) async throws {
        try await withLoop { loop in
            try await withConnectedPair(on: loop, at: transport.listenAddress) { client, peer in
                let payload = (0..<(12 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
                async let sent: Void = client.send(payload: payload)
                let received = try await peer.nextFrame()
                try await sent
                #expect(received == payload)
            }
        }
    }

    /// Large raw bodies leave a connection uncopied (after the rest of their frame); the peer
    /// still receives every message whole and in the order sent, small ones between them.
    @Test func largeRawBodiesArriveWholeAndInOrder() async throws {
        try await withLoop { loop in
            try await withConnectedPair(on: loop, at: .unix(path: temporarySocketPath())) { client, peer in
                let welcome = Welcome(maxFrameBytes: 16 << 20, features: [WireFeature.rawBodies])
                try await client.adopt(welcome)
                try await peer.adopt(welcome)
                let messages: [WireMessage] = (0..<12).map { index in
                    let size = index % 3 == 0 ? 40 : (index % 3 == 1 ? 16 << 10 : (3 << 20) + index)
                    let body = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) })
                    return index % 4 == 3
                        ? .ping(PingMessage(id: MessageID(index)))
                        : .response(ResponseMessage(id: MessageID(index), status: 200, source: "cache", body: body, ageMs: 1))
                }
                // All at once on the loop, far more than the socket takes: the bodies wait in
                // queued writes, and what follows each queues behind it.
                try await loop.submit {
                    for message in messages { try client.connection.send(message) }
                }
                for message in messages {
                    #expect(try await peer.nextMessage() == message)
                }
            }
        }
    }

    /// An async reader gets a large frame in the block it was gathered in (no copy out of the
    /// decoder), a small one as bytes of its own, in the order sent, each intact.
    @Test func largeFramesReachAnAsyncReaderInTheirBlocks() async throws {
        try await withLoop { loop in
            try await withConnectedPair(on: loop, at: .unix(path: temporarySocketPath())) { client, peer in
                let payloads: [[UInt8]] = [100, 200 << 10, 7, (1 << 20) + 3].enumerated().map { index, size in
                    (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ index) }
                }
                for payload in payloads { try await client.send(payload: payload) }
                var inBlocks: [Bool] = []
                for payload in payloads {
                    let frame = try #require(try await peer.frames.nextReceivedFrame())
                    switch frame {
                    case .bytes(let bytes):
                        #expect(bytes == payload)
                        inBlocks.append(false)
                    case .block(let block):
                        #expect(Array(block.bytes) == payload)
                        inBlocks.append(true)
                    }
                }
                // The 1 MB one cannot arrive in one read: it is gathered in a block. (The 200 KiB
                // one may be too, or may arrive whole in the decoder's buffer.)
                #expect(inBlocks[0] == false && inBlocks[2] == false, "small frames come as bytes")
                #expect(inBlocks[3], "a large frame comes in its block")
            }
        }
    }

    /// The streams of a loop share one read buffer: frames arriving on many connections at
    /// once, each split across reads, still reach each connection whole and unmixed.
    @Test func connectionsReadingAtOnceOnOneLoopKeepTheirOwnBytes() async throws {
        try await withLoop { loop in
            let server = try await TestServer.start(on: loop, at: .unix(path: temporarySocketPath()))
            var clients: [AsyncFrameConnection] = []
            var peers: [AsyncFrameConnection] = []
            for _ in 0..<6 {
                clients.append(try await AsyncFrameConnection.connect(to: server.address, on: loop))
                peers.append(try await server.accept())
            }
            // Frames larger than a read, so a connection's decoder holds a partial frame while
            // the others read.
            func frame(_ connection: Int, _ index: Int) -> [UInt8] {
                (0..<((100 << 10) + connection * 977 + index)).map { UInt8(truncatingIfNeeded: $0 &* (connection + 3) &+ index) }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (connection, client) in clients.enumerated() {
                    group.addTask { for index in 0..<8 { try await client.send(payload: frame(connection, index)) } }
                }
                for (connection, peer) in peers.enumerated() {
                    group.addTask {
                        for index in 0..<8 {
                            let received = try await peer.nextFrame()
                            #expect(received == frame(connection, index), "connection \(connection), frame \(index)")
                        }
                    }
                }
                try await group.waitForAll()
            }
            for connection in clients + peers { await connection.close() }
            await server.stop()
        }
    }

    /// A connection that carried large frames in both directions gives their storage back:
    /// idle, its buffers hold at most a few small ones.
    @Test func anIdleConnectionKeepsOnlySmallBuffersAfterLargeFrames() async throws {
        try await withLoop { loop in
            try await withConnectedPair(on: loop, at: .unix(path: temporarySocketPath())) { client, peer in
                let large = [UInt8](repeating: 7, count: 900 << 10)
                for _ in 0..<3 {
                    async let sent: Void = client.send(payload: large)
                    #expect(try await peer.nextFrame() == large)
                    try await sent
                    try await peer.send(.response(ResponseMessage(id: 1, status: 200, body: Data(large))))
                    #expect(try await client.nextMessage()?.id == 1)
                }
                // One more small frame each way, so both ends have emptied their buffers.
                try await client.send(.ping(PingMessage(id: 2)))
                #expect(try await peer.nextMessage()?.id == 2)
                try await peer.send(.pong(PongMessage(id: 2)))
                #expect(try await client.nextMessage()?.id == 2)
                for connection in [client.connection, peer.connection] {
                    let capacity = try await loop.submit { connection.bufferCapacity }
                    // Four buffers of at most 64 KiB each.
                    #expect(capacity <= 256 << 10, "an idle connection holds \(capacity) bytes of buffers")
                }
            }
        }
    }

    /// Large rests of a write are handed to libuv without a copy, small ones are copied: mixed,
    /// behind a reader that starts late, every byte still arrives in order.
    @Test func largeAndSmallWritesMixedArriveInOrderAndIntact() async throws {
        try await withLoop { loop in
            try await withConnectedPair(on: loop, at: .unix(path: temporarySocketPath())) { client, peer in
                let frames = (0..<64).map { index in
                    let count = index % 2 == 0 ? (96 << 10) + index : 100 + index
                    return (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) }
                }
                let writer = Task {
                    for frame in frames { try await client.send(payload: frame) }
                }
                // Let the socket fill up first, so later writes queue behind earlier ones.
                try await Task.sleep(for: .milliseconds(50))
                for (index, frame) in frames.enumerated() {
                    let received = try await peer.nextFrame()
                    #expect(received == frame, "frame \(index) arrived changed")
                }
                try await writer.value
            }
        }
    }

    @Test func aSlowReaderPausesTheSocketAndTheWriterWaits() async throws {
        try await withLoop { loop in
            try await withConnectedPair(on: loop, at: .unix(path: temporarySocketPath())) { client, peer in
                let chunk = [UInt8](repeating: 7, count: 256 << 10)
                let total = 256  // 64 MiB: far more than the socket buffers and the inbox hold.
                let sawBackpressure = Mutex(false)
                let writer = Task {
                    for _ in 0..<total {
                        try await client.send(payload: chunk)
                        let writable = try await loop.submit { client.connection.stream.isWritable }
                        if !writable { sawBackpressure.withLock { $0 = true } }
                    }
                }
                // Read nothing until the writer has filled every buffer and felt the back-pressure
                // (however long a loaded machine takes to get there; at most 20 s).
                let start = ContinuousClock.now
                while !sawBackpressure.withLock({ $0 }), ContinuousClock.now - start < .seconds(20) {
                    try await Task.sleep(for: .milliseconds(10))
                }
                var count = 0
                while count < total, let frame = try await peer.nextFrame() {
                    #expect(frame.count == chunk.count)
                    count += 1
                }
                try await writer.value
                #expect(count == total)
                #expect(sawBackpressure.withLock { $0 }, "the write queue never crossed its high watermark")
            }
        }
    }

    @Test(arguments: [
        ("oversized length", [0x7f, 0xff, 0xff, 0xff, 0x7b] as [UInt8], ProtocolErrorCode.oversizedFrame),
        ("invalid JSON", try! FrameEncoder.frame(payload: Array("{\"type\":".utf8)), .invalidJSON),
        ("invalid UTF-8", try! FrameEncoder.frame(payload: [0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), .invalidUTF8),
        ("unknown type", try! FrameEncoder.frame(payload: Array("{\"type\":\"teleport\"}".utf8)), .unknownType),
    ])
    func aBadFrameGetsAnErrorAndACloseWhileOtherConnectionsCarryOn(
        _ name: String, _ bytes: [UInt8], _ expected: ProtocolErrorCode
    ) async throws {
        try await withLoop { loop in
            let listener = try await startPongServer(on: loop)
            let bad = try await AsyncFrameConnection.connect(to: listener.boundAddress, on: loop)
            let good = try await AsyncFrameConnection.connect(to: listener.boundAddress, on: loop)
            try await bad.sendRaw(bytes)
            let reply = try await bad.nextMessage()
            guard case .error(let error) = reply else {
                Issue.record("expected an error message, got \(String(describing: reply))")
                return
            }
            #expect(error.code == expected)
            #expect(!error.message.isEmpty)
            #expect(try await bad.nextFrame() == nil, "the server closes after the error")
            try await good.send(.ping(PingMessage(id: 5)))
            #expect(try await good.nextMessage() == .pong(PongMessage(id: 5)))
            await bad.close()
            await good.close()
            await listener.closeAndWait()
        }
    }

    @Test func nothingAfterABadFrameIsDelivered() async throws {
        try await withLoop { loop in
            let received = MessageLog()
            let listener = try await startPongServer(on: loop, recordingIn: received)
            let client = try await AsyncFrameConnection.connect(to: listener.boundAddress, on: loop)
            let codec = MessageCodec()
            // A good ping, a bad frame and another good ping, in one write.
            let bytes =
                try codec.encodeFrame(.ping(PingMessage(id: 1))) + FrameEncoder.frame(payload: Array("{oops".utf8))
                + codec.encodeFrame(.ping(PingMessage(id: 2)))
            try await client.sendRaw(bytes)
            #expect(try await client.nextMessage() == .pong(PongMessage(id: 1)))
            guard case .error(let error)? = try await client.nextMessage() else {
                Issue.record("expected an error message")
                return
            }
            #expect(error.code == .invalidJSON)
            #expect(try await client.nextFrame() == nil)
            #expect(received.all == [.ping(PingMessage(id: 1))])
            await client.close()
            await listener.closeAndWait()
        }
    }

    @Test func aTruncatedFrameAtTheEndIsReportedAsSuch() async throws {
        try await withLoop { loop in
            try await withConnectedPair(on: loop, at: .tcp(host: "127.0.0.1", port: 0)) { client, peer in
                try await client.sendRaw([0, 0, 0, 10, 0x7b])
                await client.close()
                await #expect(throws: FrameConnection.End.self) { try await peer.nextFrame() }
                do {
                    _ = try await peer.nextFrame()
                } catch let end as FrameConnection.End {
                    guard case .protocolError(let error) = end else {
                        Issue.record("expected a protocol error, got \(end)")
                        return
                    }
                    #expect(error.code == .truncatedFrame)
                }
            }
        }
    }

    @Test func sendingAnOversizedFrameFailsWithoutSendingAnything() async throws {
        try await withLoop { loop in
            try await withConnectedPair(on: loop, at: .unix(path: temporarySocketPath()), maxFrameBytes: 64) { client, peer in
                await #expect(throws: FrameError.self) { try await client.send(payload: [UInt8](repeating: 1, count: 65)) }
                try await client.send(.ping(PingMessage(id: 1)))
                #expect(try await peer.nextMessage() == .ping(PingMessage(id: 1)))
            }
        }
    }

    @Test func connectingToNothingFailsClearly() async throws {
        try await withLoop { loop in
            let path = temporarySocketPath()
            do {
                _ = try await StreamConnection.connect(to: .unix(path: path), on: loop)
                Issue.record("connected to a socket that does not exist")
            } catch let error as UVError {
                #expect(error.name == "ENOENT")
                #expect(error.description.contains(path))
            }
            // A port bound but not listening, held for the whole check: nothing accepts there, and
            // no other test's server can take it meanwhile (a port merely closed could be).
            let (fd, port) = try boundButNotListening()
            defer { close(fd) }
            do {
                let stream = try await StreamConnection.connect(to: .tcp(host: "127.0.0.1", port: port), on: loop)
                Issue.record("connected to 127.0.0.1:\(port)")
                await stream.closeAndWait()
            } catch let error as UVError {
                #expect(error.name == "ECONNREFUSED")
            }
        }
    }

    @Test func aStaleSocketFileIsReplacedButALiveOneIsNot() async throws {
        try await withLoop { loop in
            let path = temporarySocketPath()
            // A socket file whose process is gone: bound, then its descriptor closed without unlinking.
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                raw.copyBytes(from: Array(path.utf8) + [0])
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            #expect(bound == 0)
            close(fd)
            #expect(FileManager.default.fileExists(atPath: path))

            let first = try await TestServer.start(on: loop, at: .unix(path: path))
            await #expect(throws: UVError.self) { _ = try await TestServer.start(on: loop, at: .unix(path: path)) }
            // Telling a live socket from a stale one means connecting to it: the live listener
            // sees that probe as a connection that closes at once.
            let probe = try await first.accept()
            #expect(try await probe.nextFrame() == nil)
            await probe.close()
            // The live listener still answers after the failed attempt.
            let client = try await AsyncFrameConnection.connect(to: .unix(path: path), on: loop)
            let peer = try await first.accept()
            try await client.send(.ping(PingMessage()))
            #expect(try await peer.nextMessage() == .ping(PingMessage()))
            await client.close()
            await peer.close()
            await first.stop()
            #expect(!FileManager.default.fileExists(atPath: path), "closing the listener removes its socket file")
        }
    }

    @Test func aRegularFileInTheWayIsNeverRemoved() async throws {
        try await withLoop { loop in
            let path = temporarySocketPath()
            let contents = Data("precious".utf8)
            #expect(FileManager.default.createFile(atPath: path, contents: contents))
            defer { unlink(path) }
            do {
                _ = try await TestServer.start(on: loop, at: .unix(path: path))
                Issue.record("listened on top of a regular file")
            } catch let error as UVError {
                #expect(error.name == "EADDRINUSE")
            }
            #expect(FileManager.default.contents(atPath: path) == contents)
        }
    }

    @Test func aUnixPathTooLongForTheKernelIsRefused() async throws {
        try await withLoop { loop in
            let path = "/tmp/" + String(repeating: "p", count: 120) + ".sock"
            for attempt in ["listen", "connect"] {
                do {
                    if attempt == "listen" {
                        _ = try await TestServer.start(on: loop, at: .unix(path: path))
                    } else {
                        _ = try await StreamConnection.connect(to: .unix(path: path), on: loop)
                    }
                    Issue.record("\(attempt) accepted a \(path.utf8.count)-byte path")
                } catch let error as UVError {
                    #expect(error.name == "ENAMETOOLONG", "\(attempt)")
                }
            }
            #expect(!FileManager.default.fileExists(atPath: String(path.prefix(107))))
        }
    }

    @Test func cancellingASenderWaitingForTheSocketToDrainEndsItsWait() async throws {
        try await withLoop { loop in
            try await withConnectedPair(on: loop, at: .unix(path: temporarySocketPath())) { client, peer in
                // The peer reads nothing: the writer fills every buffer, then waits.
                let chunk = [UInt8](repeating: 1, count: 256 << 10)
                let writer = Task {
                    while true { try await client.send(payload: chunk) }
                }
                // Once the stream is over its high watermark, the writer waits (or is about to).
                try await eventually("the stream to cross its high watermark") {
                    try await !loop.submit { client.connection.stream.isWritable }
                }
                writer.cancel()
                await #expect(throws: CancellationError.self) { try await writer.value }
            }
        }
    }

    @Test func codeOnTheLoopSendsAndReceivesWithoutHopping() async throws {
        try await withLoop { loop in
            try await withConnectedPair(on: loop, at: .unix(path: temporarySocketPath())) { client, peer in
                let echo = Task(executorPreference: loop) {
                    while let frame = try await peer.nextFrame() {
                        #expect(loop.inEventLoop)
                        try await peer.send(payload: frame)
                    }
                }
                for index in 0..<100 {
                    try await client.send(payload: Array("frame \(index)".utf8))
                    #expect(try await client.nextFrame() == Array("frame \(index)".utf8))
                }
                await client.close()
                try await echo.value
            }
        }
    }

    @Test func cancellingAReaderEndsItsWait() async throws {
        try await withLoop { loop in
            try await withConnectedPair(on: loop, at: .unix(path: temporarySocketPath())) { client, peer in
                let reader = Task { try await peer.nextFrame() }
                // A moment for the reader to park in its wait: nothing outside the stream shows
                // a parked reader. (Cancelled sooner, it still must end, cancelled.)
                try await Task.sleep(for: .milliseconds(20))
                reader.cancel()
                await #expect(throws: CancellationError.self) { try await reader.value }
                // The connection still works for the next reader.
                try await client.send(payload: Array("after".utf8))
                #expect(try await peer.nextFrame() == Array("after".utf8))
            }
        }
    }
}

/// A TCP socket bound to a free port on 127.0.0.1 and not listening, and that port.
private func boundButNotListening() throws -> (fd: Int32, port: UInt16) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard fd >= 0, bound else {
        close(fd)
        throw UVError(code: -errno, operation: "bind")
    }
    return (fd, UInt16(bigEndian: address.sin_port))
}
