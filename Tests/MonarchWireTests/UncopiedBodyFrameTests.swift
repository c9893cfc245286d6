import Foundation
import MonarchFraming
import Testing
@testable import MonarchWire

/// Frames whose large raw body is left out of the buffer, to be sent after it uncopied: the
/// bytes appended, then the body returned, must be the very frame the codec writes whole.
@Suite struct UncopiedBodyFrameTests {
    static let large = Data((0..<(MessageCodec.uncopiedBodyMinimum + 5)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    static let small = Data(repeating: 7, count: MessageCodec.uncopiedBodyMinimum - 1)

    static func response(_ body: Data) -> WireMessage {
        .response(ResponseMessage(id: 41, status: 200, source: "cache", headers: ["etag": "\"v\""], body: body, ageMs: 3, ttlMs: 9_000))
    }

    @Test("A large raw body is returned, not appended, and the head then the body is the whole frame")
    func largeBodiesAreLeftOut() throws {
        let codec = MessageCodec(rawBodies: true)
        for message in [Self.response(Self.large), .request(RequestMessage(id: 5, path: "up", body: Self.large))] {
            var whole: [UInt8] = [1, 2]
            try codec.appendFrame(message, to: &whole)
            var head: [UInt8] = [1, 2]
            let body = try #require(try codec.appendFrameLeavingBody(message, to: &head))
            #expect(body == Self.large)
            #expect(head.count < 1_000)
            #expect(head + Array(body) == whole)
        }
    }

    @Test("A small body, a JSON connection and a message without a body are appended whole",
          arguments: [(Self.response(Self.small), true), (Self.response(Self.large), false), (WireMessage.ping(PingMessage(id: 2)), true)])
    func otherFramesAreWhole(_ message: WireMessage, rawBodies: Bool) throws {
        let codec = MessageCodec(rawBodies: rawBodies)
        var whole: [UInt8] = []
        try codec.appendFrame(message, to: &whole)
        var framed: [UInt8] = []
        #expect(try codec.appendFrameLeavingBody(message, to: &framed) == nil)
        #expect(framed == whole)
    }

    @Test("A prepared response's large body is left out the same way, for any id and age")
    func preparedBodiesAreLeftOut() throws {
        let codec = MessageCodec(rawBodies: true)
        guard case .response(let message) = Self.response(Self.large) else { return }
        let prepared = PreparedResponse(message)
        for (id, age) in [(MessageID(0), UInt64?.none), (9, 0), (12_345, 86_400_000)] {
            var whole: [UInt8] = []
            try codec.appendFrame(prepared, answering: id, ageMs: age, to: &whole)
            var head: [UInt8] = []
            let body = try #require(try codec.appendFrameLeavingBody(prepared, answering: id, ageMs: age, to: &head))
            #expect(head + Array(body) == whole, "id \(id)")
        }
        var small: [UInt8] = []
        guard case .response(let smallMessage) = Self.response(Self.small) else { return }
        #expect(try codec.appendFrameLeavingBody(PreparedResponse(smallMessage), answering: 1, to: &small) == nil)
    }

    @Test("A frame over the limit is refused whole, the body counted, and nothing is appended")
    func theLimitCountsTheBody() {
        let codec = MessageCodec(maxFrameBytes: MessageCodec.uncopiedBodyMinimum + 100, rawBodies: true)
        var output: [UInt8] = [4]
        #expect(throws: FrameError.self) { try codec.appendFrameLeavingBody(Self.response(Self.large), to: &output) }
        #expect(output == [4])
    }
}
