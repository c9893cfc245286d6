import Foundation
import MonarchFraming
import Testing
@testable import MonarchWire

/// Large payloads gather into blocks of their own as they arrive and are handed over with
/// them: every frame still comes out whole and in order, and what keeps a block keeps its bytes.
@Suite struct FrameBlockTests {
    static func payload(_ count: Int, seed: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) }
    }

    /// Feeds `bytes` in reads of `read` bytes, taking every complete frame after each read;
    /// returns the payloads and, for each, whether it came in a block (kept alive).
    static func decode(_ bytes: [UInt8], reads read: Int, decoder: inout FrameDecoder) throws -> [([UInt8], FrameBlock?)] {
        var out: [([UInt8], FrameBlock?)] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + read)
            bytes[offset..<end].withUnsafeBytes { decoder.append($0) }
            offset = end
            while let next = try decoder.nextFrame({ bytes, block in (Array(bytes), block) }) { out.append(next) }
        }
        return out
    }

    @Test("Large payloads come in blocks, small ones from the buffer, all whole and in order, whatever the reads",
          arguments: [1, 1_000, 65_536, 1 << 20])
    func framesComeWholeAndInOrder(read: Int) throws {
        let sizes = [10, FrameDecoder.blockMinimum, 3, 300_000, FrameDecoder.blockMinimum - 1, 1 << 20, 0, 70_000]
        let payloads = sizes.enumerated().map { Self.payload($0.element, seed: $0.offset) }
        let bytes = try payloads.flatMap { try FrameEncoder.frame(payload: $0) }
        var decoder = FrameDecoder()
        let decoded = try Self.decode(bytes, reads: read, decoder: &decoder)
        #expect(decoded.map(\.0) == payloads)
        // A payload already whole in the buffer when its header is read stays there.
        for (index, (payload, block)) in decoded.enumerated() where payload.count < FrameDecoder.blockMinimum {
            #expect(block == nil, "payload \(index)")
        }
        if read < FrameDecoder.blockMinimum {
            for (index, (payload, block)) in decoded.enumerated() where payload.count >= FrameDecoder.blockMinimum {
                #expect(block != nil, "payload \(index)")
            }
        }
        #expect(decoder.bufferedByteCount == 0)
        try decoder.finish()
    }

    @Test("A block kept keeps its bytes while the decoder goes on")
    func keptBlocksKeepTheirBytes() throws {
        let first = Self.payload(200_000, seed: 1)
        let second = Self.payload(200_000, seed: 2)
        var decoder = FrameDecoder()
        let decoded = try Self.decode(
            try FrameEncoder.frame(payload: first) + FrameEncoder.frame(payload: second), reads: 4_096, decoder: &decoder)
        let block = try #require(decoded.first?.1)
        #expect(Array(block.bytes) == first)
        #expect(decoded.last.map { Array($0.1?.bytes ?? UnsafeRawBufferPointer(start: nil, count: 0)) } == second)
    }

    @Test("A large frame cut short is reported truncated; one over the limit is refused from its header")
    func truncatedAndOversized() throws {
        var decoder = FrameDecoder()
        let bytes = try FrameEncoder.frame(payload: Self.payload(100_000, seed: 3))
        bytes[..<50_000].withUnsafeBytes { decoder.append($0) }
        #expect(try decoder.nextFrame() == nil)
        #expect(decoder.bufferedByteCount == 50_000)
        #expect(throws: FrameError.truncated(expected: 100_004, received: 50_000)) { try decoder.finish() }
        // The limit shrank below the frame under way: refused when asked for.
        decoder.maxFrameBytes = 90_000
        #expect(throws: FrameError.oversized(length: 100_000, limit: 90_000)) { try decoder.nextFrame() }
    }

    @Test("A raw body decoded from a block lies where it arrived, uncopied, and equals the body sent")
    func rawBodiesKeepTheBlock() throws {
        let body = Data(Self.payload(500_000, seed: 4))
        let message = WireMessage.response(ResponseMessage(id: 3, status: 200, source: "cache", body: body, ageMs: 1))
        let codec = MessageCodec(rawBodies: true)
        var decoder = FrameDecoder()
        let decoded = try Self.decode(codec.encodeFrame(message), reads: 16_384, decoder: &decoder)
        let block = try #require(decoded.first?.1)
        let received = try codec.decode(block.bytes, keeping: block)
        #expect(received == message)
        guard case .response(let response) = received, let content = response.content else {
            Issue.record("not a response with a body")
            return
        }
        let start = content.bytes.withUnsafeBytes { $0.baseAddress }
        #expect(start == block.bytes.baseAddress.map { $0 + block.bytes.count - body.count }, "the body lies in the block")
    }

    @Test("Reads made into the room a large frame offers are taken where they lie, never past the frame")
    func readsLandInTheBlock() throws {
        let first = Self.payload(1 << 20, seed: 5)
        let second = Self.payload(90_000, seed: 6)
        let bytes = try FrameEncoder.frame(payload: first) + FrameEncoder.frame(payload: second)
        var decoder = FrameDecoder()
        #expect(decoder.readRoom() == nil, "no large frame under way")
        var offset = 0
        var frames: [[UInt8]] = []
        var landed = 0
        while offset < bytes.count {
            if let room = decoder.readRoom() {
                // A read into the room: as much as the "socket" has, up to the room.
                let count = min(room.count, bytes.count - offset, 50_000)
                bytes[offset..<(offset + count)].withUnsafeBytes { room.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: count) }
                decoder.append(UnsafeRawBufferPointer(start: room.baseAddress, count: count))
                offset += count
                landed += count
            } else {
                let count = min(4_096, bytes.count - offset)
                bytes[offset..<(offset + count)].withUnsafeBytes { decoder.append($0) }
                offset += count
            }
            while let frame = try decoder.nextFrame() { frames.append(frame) }
        }
        #expect(frames == [first, second])
        #expect(landed > first.count / 2, "most of the large frames were read into their blocks")
        #expect(decoder.bufferedByteCount == 0)
    }
}
