import Foundation
import Testing
@testable import MonarchWire

/// The `rawBodies` extension (protocol section 2.1): bodies as raw bytes after the JSON.
@Suite struct RawBodyPayloadTests {
    let plain = MessageCodec()
    let raw = MessageCodec(rawBodies: true)

    /// Every byte value, and not valid UTF-8.
    static let binary = Data((0...255).map { UInt8($0) } + [0xC0, 0xAF])

    static let bodied: [WireMessage] = [
        .request(RequestMessage(id: 3, path: "notes/1", method: "PUT", headers: ["content-type": "text/plain"], body: binary)),
        .response(ResponseMessage(id: 4, status: 200, source: "cache", headers: ["etag": "\"1\""], body: binary, ttlMs: 500)),
        .store(StoreMessage(id: 5, key: "notes/1", status: 200, body: binary, ttlMs: 1000, tags: ["notes"])),
        .response(ResponseMessage(id: 6, status: 204, body: Data())),
    ]

    @Test(arguments: bodied)
    func aMessageWithABodyTravelsRawAndDecodesToTheSameMessage(_ message: WireMessage) throws {
        let payload = raw.encode(message)
        #expect(payload.first == 0x01)
        let jsonCount = Int(payload[1]) << 24 | Int(payload[2]) << 16 | Int(payload[3]) << 8 | Int(payload[4])
        let body = RawBodyPayload.body(of: message)?.bytes ?? Data()
        // Header, JSON without "body", then the bytes as they are: no base64 anywhere.
        #expect(payload.count == 5 + jsonCount + body.count)
        #expect(Data(payload[(5 + jsonCount)...]) == body)
        #expect(!String(decoding: payload[5..<5 + jsonCount], as: UTF8.self).contains("\"body\""))
        #expect(try raw.decode(payload) == message)
        // The same message as plain JSON decodes the same on a raw-bodies connection too.
        #expect(try raw.decode(plain.encode(message)) == message)
    }

    @Test func aBodyReadAsBase64IsWrittenRawAndABodyReadRawIsWrittenAsBase64() throws {
        let message = WireMessage.response(ResponseMessage(id: 1, status: 200, body: Self.binary))
        let fromPlain = try plain.decode(plain.encode(message))
        let forwardedRaw = raw.encode(fromPlain)
        #expect(forwardedRaw.first == 0x01)
        #expect(try raw.decode(forwardedRaw) == message)
        let fromRaw = try raw.decode(raw.encode(message))
        let forwardedPlain = plain.encode(fromRaw)
        #expect(forwardedPlain.first == UInt8(ascii: "{"))
        #expect(try plain.decode(forwardedPlain) == message)
    }

    @Test func messagesWithoutABodyStayJSON() throws {
        let messages: [WireMessage] = [
            .ping(PingMessage(id: 1)), .miss(MissMessage(id: 2, source: "cache")),
            .response(ResponseMessage(id: 3, status: 404)), .request(RequestMessage(id: 4, path: "a")),
        ]
        for message in messages {
            #expect(raw.encode(message) == plain.encode(message), "\(message.type)")
        }
    }

    @Test func aWholeFrameCarriesTheRawPayload() throws {
        let message = WireMessage.store(StoreMessage(id: 9, key: "k", status: 200, body: Self.binary))
        var frame: [UInt8] = [0xAA]
        try raw.appendFrame(message, to: &frame)
        var decoder = FrameDecoder()
        decoder.append(contentsOf: frame.dropFirst())
        let payload = try #require(try decoder.nextFrame())
        #expect(payload == raw.encode(message))
    }

    private func code(of payload: [UInt8], codec: MessageCodec? = nil) -> ProtocolErrorCode? {
        do {
            _ = try (codec ?? raw).decode(payload)
            return nil
        } catch {
            return error.code
        }
    }

    private func rawPayload(_ json: String, body: [UInt8] = Array("x".utf8), jsonCount: Int? = nil) -> [UInt8] {
        let bytes = Array(json.utf8)
        let count = UInt32(jsonCount ?? bytes.count)
        return [0x01, UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)] + bytes + body
    }

    @Test func defectsAreNamed() {
        let ok = #"{"type":"response","id":1,"status":200}"#
        #expect(code(of: rawPayload(ok)) == nil)
        #expect(code(of: rawPayload(ok), codec: plain) == .invalidJSON, "not agreed")
        #expect(code(of: [0x01, 0, 0]) == .invalidJSON, "short header")
        #expect(code(of: rawPayload(ok, jsonCount: 0)) == .invalidJSON, "no JSON")
        #expect(code(of: rawPayload(ok, body: [], jsonCount: ok.utf8.count + 1)) == .invalidJSON, "JSON past the end")
        #expect(code(of: rawPayload(#"{"type":"ping","id":1}"#)) == .invalidField, "a raw body after a ping")
        #expect(code(of: rawPayload(#"{"type":"response","id":1,"status":200,"body":"AA=="}"#)) == .invalidField, "given twice")
        #expect(code(of: rawPayload(#"{"type":"response","id":1,"status":200,"body":null}"#)) == nil, "null is absent")
        #expect(code(of: rawPayload(#"{"type":"response","id":1}"#)) == .missingField, "the JSON is checked as usual")
        #expect(code(of: rawPayload("{\"type\":\"response\",\"id\":1,\"status\":200,\"source\":\"\u{FFFD}\"}")) == nil)
        #expect(code(of: [0x01, 0, 0, 0, 2, 0xC0, 0xAF]) == .invalidUTF8, "the JSON's UTF-8 is checked")
    }

    @Test func theErrorForARawBodyAfterAnotherTypeCarriesItsID() throws {
        do {
            _ = try raw.decode(rawPayload(#"{"type":"miss","id":42}"#))
            Issue.record("a raw body after a miss decoded")
        } catch {
            #expect(error.code == .invalidField)
            #expect(error.id == 42)
        }
    }

    @Test func featuresAreDecodedAndBounded() throws {
        let hello = try plain.decode(Array(#"{"type":"hello","role":"client","version":1,"features":["rawBodies","futureThing"]}"#.utf8))
        #expect(hello == .hello(Hello(role: .client, features: ["rawBodies", "futureThing"])))
        #expect(WireFeature.agreed(to: ["futureThing", "rawBodies"]) == ["rawBodies"])
        #expect(WireFeature.agreed(to: nil) == [])
        let tooMany = (0..<33).map { "\"f\($0)\"" }.joined(separator: ",")
        for bad in [#"["raw bodies"]"#, #"["1st"]"#, #"[1]"#, #""rawBodies""#, "[\(tooMany)]"] {
            let payload = Array(#"{"type":"hello","role":"client","version":1,"features":\#(bad)}"#.utf8)
            #expect(code(of: payload, codec: plain) == .invalidField, "\(bad)")
        }
        let welcome = WireMessage.welcome(Welcome(maxFrameBytes: 1024, features: ["rawBodies"]))
        #expect(try plain.decode(plain.encode(welcome)) == welcome)
    }
}
