import Foundation
@testable import MonarchBench
import MonarchWire
import Testing

/// The load generator's scan of `response` frames agrees with the codec, and leaves anything
/// else to it.
@Suite("AnswerScanner")
struct AnswerScannerTests {
    private let codec = MessageCodec()

    @Test("Responses the codec writes: id, status, source and body length as the codec reads them")
    func agreesWithTheCodec() {
        var generator = SystemRandomNumberGenerator()
        for length in [0, 1, 2, 3, 4, 5, 16, 1023, 1024, 1025, 65_536] {
            let body = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let message = ResponseMessage(
                id: MessageID(length * 7 + 1), status: 200 + length % 3, source: length % 2 == 0 ? "cache" : nil,
                headers: ["content-type": "text/plain", "x-odd": "a \"quoted\" {value}"], body: length == 0 ? nil : body,
                stale: length % 2 == 1, ageMs: 12, ttlMs: 60_000, cacheable: true)
            let payload = codec.encode(.response(message))
            let scanned = AnswerScanner.scan(payload)
            #expect(scanned?.id == message.id, "\(length)")
            #expect(scanned?.status == message.status)
            #expect(scanned?.source == message.source)
            #expect(scanned?.bodyBytes == length)
        }
    }

    @Test("Other messages and odd inputs are left to the codec")
    func leavesTheRest() {
        let failure = codec.encode(.failure(FailureMessage(id: 3, error: .init(code: "exhausted", message: "no"))))
        #expect(AnswerScanner.scan(failure) == nil)
        #expect(AnswerScanner.scan(codec.encode(.pong(PongMessage(id: 1)))) == nil)
        for text in [
            "", "{}", "[]", #"{"type":"response","id":1}"#, #"{"type":"response","status":200}"#,
            #"{"type":"response","id":1,"status":200,"body":"abc"}"#,
            #"{"type":"response","id":1,"status":200,"source":"ca\"che"}"#,
            #"{"type":"response","id":1,"id":2,"status":200}"#, #"{"type":"response","id":1,"status":200"#,
            #"{"type":"response","id":1,"status":700}"#, #"{"type":"res\u0070onse","id":1,"status":200}"#,
        ] {
            #expect(AnswerScanner.scan(Array(text.utf8)) == nil, "\(text)")
        }
        let spaced = #" { "type" : "response" , "headers" : {"a":"}"} , "id" : 9 , "status" : 404 } "#
        #expect(AnswerScanner.scan(Array(spaced.utf8))?.status == 404)
    }
}
