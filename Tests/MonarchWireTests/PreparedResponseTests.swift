import Foundation
import Testing
@testable import MonarchWire

/// A response encoded once and framed for many requests: each frame must be the one the codec
/// writes for the message with that request's id.
@Suite struct PreparedResponseTests {
    static let messages: [ResponseMessage] = [
        ResponseMessage(
            id: 1, status: 200, source: "cache",
            headers: ["content-type": "text/plain", "etag": "\"v1\"", "x-note": "tab\tnewline\nslash\\ é"],
            body: Data((0...255).map { UInt8($0) }), ttlMs: 500),
        ResponseMessage(id: 1, status: 404, source: "network", stale: true, ageMs: 12, cacheable: false),
        ResponseMessage(id: 1, status: 204, body: Data()),
        ResponseMessage(
            id: 1, status: 200, source: "cache", headers: ["etag": "\"big\""],
            body: Data((0..<(MessageCodec.uncopiedBodyMinimum + 3)).map { UInt8(truncatingIfNeeded: $0 &* 13) }), ageMs: 4,
            ttlMs: 500),
    ]

    @Test("A large body is held once: its raw form is prepared, its base64 text never is")
    func largeBodiesHoldNoBase64() throws {
        let large = PreparedResponse(Self.messages[3])
        #expect(large.template(rawBodies: false) == nil)
        let raw = try #require(large.template(rawBodies: true))
        #expect(raw.rawBody?.count == MessageCodec.uncopiedBodyMinimum + 3)
        #expect(raw.afterID.count < 200)
        #expect(PreparedResponse(Self.messages[0]).template(rawBodies: false) != nil, "a small body's JSON form is held")
    }

    /// Ids of every length, up to the largest the protocol allows (2^53 - 1).
    static let ids: [MessageID] = [0, 7, 9, 10, 99, 100, 12_345, 1 << 32, (1 << 53) - 1]

    @Test("Every frame is byte for byte the codec's frame of the message with that id, in both payload forms",
          arguments: messages, [false, true])
    func framesMatchTheCodec(_ message: ResponseMessage, rawBodies: Bool) throws {
        let codec = MessageCodec(rawBodies: rawBodies)
        let prepared = PreparedResponse(message)
        for id in Self.ids {
            var expected: [UInt8] = [9, 9]
            var answered = message
            answered.id = id
            try codec.appendFrame(.response(answered), to: &expected)
            var framed: [UInt8] = [9, 9]
            try codec.appendFrame(prepared, answering: id, to: &framed)
            #expect(framed == expected, "id \(id)")
            #expect(try codec.decode(Array(framed.dropFirst(6))) == .response(answered))
        }
    }

    @Test("A frame's age is spliced as the codec writes it, a header that looks like the age field left alone",
          arguments: [false, true])
    func agesAreSpliced(rawBodies: Bool) throws {
        let message = ResponseMessage(
            id: 1, status: 200, source: "cache", headers: ["x-trap": #","ageMs":0"#], body: Data("hot body".utf8),
            ageMs: 12, ttlMs: 60_000)
        let codec = MessageCodec(rawBodies: rawBodies)
        let prepared = PreparedResponse(message)
        for id in Self.ids {
            for age: UInt64? in [nil, 0, 9, 10, 12, 86_400_000, (1 << 53) - 1] {
                var expected: [UInt8] = []
                var answered = message
                answered.id = id
                answered.ageMs = age ?? message.ageMs
                try codec.appendFrame(.response(answered), to: &expected)
                var framed: [UInt8] = []
                try codec.appendFrame(prepared, answering: id, ageMs: age, to: &framed)
                #expect(framed == expected, "id \(id), age \(String(describing: age))")
            }
        }
        // A message without an age gets none.
        var framed: [UInt8] = []
        try codec.appendFrame(PreparedResponse(Self.messages[0]), answering: 3, ageMs: 5, to: &framed)
        var expected: [UInt8] = []
        var answered = Self.messages[0]
        answered.id = 3
        try codec.appendFrame(.response(answered), to: &expected)
        #expect(framed == expected)
    }

    @Test("One prepared response serves connections of both payload forms, in any order")
    func bothFormsFromOneValue() throws {
        let prepared = PreparedResponse(Self.messages[0])
        for rawBodies in [true, false, true, false] {
            let codec = MessageCodec(rawBodies: rawBodies)
            var framed: [UInt8] = []
            try codec.appendFrame(prepared, answering: 42, to: &framed)
            var answered = Self.messages[0]
            answered.id = 42
            #expect(try codec.decode(Array(framed.dropFirst(4))) == .response(answered))
            #expect((framed[4] == RawBodyPayload.marker) == rawBodies)
        }
    }

    @Test("A frame over the limit is refused as the codec refuses it, and nothing is appended")
    func oversizedFrames() throws {
        let message = ResponseMessage(id: 1, status: 200, body: Data(repeating: 7, count: 4_000))
        for rawBodies in [false, true] {
            let codec = MessageCodec(maxFrameBytes: 1_000, rawBodies: rawBodies)
            var expected: [UInt8] = [1, 2, 3]
            var framed: [UInt8] = [1, 2, 3]
            var answered = message
            answered.id = 77
            let codecError = #expect(throws: FrameError.self) { try codec.appendFrame(.response(answered), to: &expected) }
            let preparedError = #expect(throws: FrameError.self) {
                try codec.appendFrame(PreparedResponse(message), answering: 77, to: &framed)
            }
            #expect(preparedError == codecError)
            #expect(framed == [1, 2, 3])
        }
    }

    @Test("Decimal ids are written as the codec writes numbers")
    func decimalDigits() {
        for value: UInt64 in [0, 1, 9, 10, 11, 99, 100, 999_999, 1_000_000, .max] {
            var output: [UInt8] = [1]
            MessageCodec.appendDecimal(value, digits: MessageCodec.decimalDigits(of: value), to: &output)
            #expect(output == [1] + Array(String(value).utf8))
        }
    }
}
