import Foundation
import Testing
@testable import MonarchWire

/// A body read from a frame stays base64 text: forwarded as it came, decoded only when asked,
/// and only accepted when canonical.
@Suite struct MessageBodyTests {
    func body(_ text: String) -> MessageBody? {
        Array(text.utf8).withUnsafeBytes { MessageBody(base64: $0) }
    }

    @Test("Canonical base64 is accepted; other letters, lengths, padding or unused bits are not")
    func canonicalOnly() {
        for text in ["", "aGk=", "aGVsbG8=", "aGVsbG8h", "+/+/", "AA==", "AAA="] {
            #expect(body(text) != nil, "\(text)")
        }
        for text in ["aGk", "aGl=", "aG k=", "aGk=\n", "a===", "=aGk", "aG=k", "aGVsbG8-", "aGVsbG8_", "AB==", "AAB=", "aGk=aGk="] {
            #expect(body(text) == nil, "\(text)")
        }
    }

    @Test("Count, bytes and equality agree between the two forms, for every length and byte")
    func formsAgree() {
        var generator = SeededGenerator(seed: 42)
        for length in 0..<70 {
            let bytes = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let text = bytes.base64EncodedString()
            let decoded = MessageBody(bytes)
            guard let held = body(text) else {
                Issue.record("\(text) refused")
                continue
            }
            #expect(held.count == length)
            #expect(held.bytes == bytes)
            #expect(held == decoded)
            #expect(held.hashValue == decoded.hashValue)
            #expect(held.base64Count == text.utf8.count && decoded.base64Count == text.utf8.count)
            var fromText: [UInt8] = [], fromBytes: [UInt8] = []
            held.appendBase64(to: &fromText)
            decoded.appendBase64(to: &fromBytes)
            #expect(fromText == Array(text.utf8) && fromBytes == fromText)
        }
    }

    @Test("A response read from a frame is written out again with its body's text as it came")
    func forwardedVerbatim() throws {
        let bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let text = bytes.base64EncodedString()
        let payload = Array(#"{"type":"response","id":9,"status":200,"body":"\#(text)"}"#.utf8)
        guard case .response(var response) = try MessageCodec().decode(payload) else {
            Issue.record("not a response")
            return
        }
        #expect(response.content?.count == bytes.count)
        response.id = 1234
        var frame: [UInt8] = []
        try MessageCodec().appendFrame(.response(response), to: &frame)
        let out = String(decoding: frame.dropFirst(4), as: UTF8.self)
        #expect(out.contains("\"body\":\"\(text)\""))
        #expect(try MessageCodec().decode(Array(frame.dropFirst(4))) == .response(response))
        #expect(response.body == bytes)
    }

    @Test("A frame is written in place: its length prefix, and nothing left behind when it is too large")
    func appendFrame() throws {
        var output: [UInt8] = [7]
        let message = WireMessage.ping(PingMessage(id: 3))
        try MessageCodec().appendFrame(message, to: &output)
        let payload = MessageCodec().encode(message)
        #expect(try output == [7] + FrameEncoder.frame(payload: payload))
        let large = WireMessage.response(ResponseMessage(id: 1, status: 200, body: Data(count: 3_000)))
        #expect(throws: FrameError.self) { try MessageCodec(maxFrameBytes: 1_000).appendFrame(large, to: &output) }
        #expect(try output == [7] + FrameEncoder.frame(payload: payload))
    }
}
