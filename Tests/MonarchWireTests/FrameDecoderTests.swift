import Testing
@testable import MonarchWire

@Suite struct FrameDecoderTests {
    private func frame(_ text: String) throws -> [UInt8] {
        try FrameEncoder.frame(payload: Array(text.utf8))
    }

    @Test func decodesSeveralFramesFromOneRead() throws {
        var decoder = FrameDecoder()
        decoder.append(contentsOf: try frame("{\"a\":1}") + frame("{}") + frame("[]"))
        #expect(try decoder.nextFrame() == Array("{\"a\":1}".utf8))
        #expect(try decoder.nextFrame() == Array("{}".utf8))
        #expect(try decoder.nextFrame() == Array("[]".utf8))
        #expect(try decoder.nextFrame() == nil)
        #expect(decoder.bufferedByteCount == 0)
        try decoder.finish()
    }

    @Test func reassemblesAFrameFedByteByByte() throws {
        let payload = Array(String(repeating: "x", count: 300).utf8)
        let bytes = try FrameEncoder.frame(payload: payload)
        var decoder = FrameDecoder()
        for (index, byte) in bytes.enumerated() {
            #expect(try decoder.nextFrame() == nil, "frame complete early at byte \(index)")
            decoder.append(contentsOf: [byte])
        }
        #expect(try decoder.nextFrame() == payload)
    }

    @Test func acceptsAFrameExactlyAtTheLimitAndRejectsOneByteMore() throws {
        var decoder = FrameDecoder(maxFrameBytes: 8)
        decoder.append(contentsOf: try FrameEncoder.frame(payload: Array("12345678".utf8)))
        #expect(try decoder.nextFrame()?.count == 8)
        decoder.append(contentsOf: [0, 0, 0, 9])
        #expect(throws: FrameError.oversized(length: 9, limit: 8)) { try decoder.nextFrame() }
    }

    @Test func rejectsAHugeLengthFromTheHeaderAlone() {
        var decoder = FrameDecoder()
        decoder.append(contentsOf: [0x7f, 0xff, 0xff, 0xff, 0x7b])
        #expect(throws: FrameError.oversized(length: 0x7fff_ffff, limit: FrameDecoder.defaultMaxFrameBytes)) {
            try decoder.nextFrame()
        }
        // Only the bytes that arrived are held, not the announced length.
        #expect(decoder.bufferedByteCount == 5)
    }

    @Test func reportsTruncationAtTheEndOfTheStream() throws {
        var decoder = FrameDecoder()
        decoder.append(contentsOf: [0, 0])
        #expect(throws: FrameError.truncated(expected: 4, received: 2)) { try decoder.finish() }
        decoder.append(contentsOf: [0, 5, 0x7b])
        #expect(try decoder.nextFrame() == nil)
        #expect(throws: FrameError.truncated(expected: 9, received: 5)) { try decoder.finish() }
    }

    @Test func keepsMemoryProportionalToPendingBytes() throws {
        var decoder = FrameDecoder()
        let bytes = try frame(String(repeating: "y", count: 1000))
        for _ in 0..<10_000 {
            decoder.append(contentsOf: bytes)
            _ = try decoder.nextFrame()
        }
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func encoderRefusesAnOversizedPayloadAndLeavesOutputUnchanged() {
        var output: [UInt8] = [1, 2]
        #expect(throws: FrameError.oversized(length: 5, limit: 4)) {
            try FrameEncoder.append(payload: [1, 2, 3, 4, 5], to: &output, maxFrameBytes: 4)
        }
        #expect(output == [1, 2])
    }
}
