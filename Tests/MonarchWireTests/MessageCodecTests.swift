import Foundation
import Testing
@testable import MonarchWire

@Suite struct MessageCodecTests {
    let codec = MessageCodec()

    private func decode(_ json: String) throws(ProtocolError) -> WireMessage {
        try codec.decode(Array(json.utf8))
    }

    private func code(of json: String) -> ProtocolErrorCode? {
        do {
            _ = try decode(json)
            return nil
        } catch {
            return error.code
        }
    }

    static let everyMessage: [WireMessage] = [
        .hello(Hello(role: .worker, token: "t", kind: "cache", capacity: 64, pid: 42, name: "cache-1")),
        .hello(Hello(role: .client)),
        .welcome(Welcome(maxFrameBytes: 1 << 24, workerId: "cache-1", heartbeatMs: 5000)),
        .request(
            RequestMessage(
                id: 7, path: "users/1", domain: "api", query: [QueryItem(name: "page", value: "2"), QueryItem(name: "flag", value: nil)],
                method: "POST", headers: ["Accept": "application/json"], body: Data([0, 1, 2, 255]),
                policy: .networkFirst, deadlineMs: 5000, params: ["id": "1"], upstream: "http://127.0.0.1:8080/users/1",
                ttlMs: 60000, key: "GET users/1 api")),
        .response(
            ResponseMessage(
                id: 7, status: 200, source: "cache", headers: ["Content-Type": "text/plain"], body: Data("hi".utf8),
                stale: true, ageMs: 1200, ttlMs: 60000, cacheable: false)),
        .miss(MissMessage(id: 7, source: "bundle", reason: "no such file")),
        .failure(
            FailureMessage(
                id: 7,
                error: .init(
                    code: "exhausted", message: "every provider missed or failed",
                    attempts: [.init(provider: "cache", outcome: .miss), .init(provider: "network", outcome: .failure, code: "upstreamStatus", message: "503")]))),
        .cancel(CancelMessage(id: 7)),
        .ping(PingMessage(id: 1)), .ping(PingMessage()), .pong(PongMessage(id: 1)),
        .store(StoreMessage(id: 9, key: "k", status: 200, headers: [:], body: Data(), ttlMs: 10)),
        .invalidate(InvalidateMessage(id: 10, target: .key("k"))),
        .invalidate(InvalidateMessage(id: 11, target: .prefix("users/"))),
        .invalidate(InvalidateMessage(id: 12, target: .tag("user-1"))),
        .invalidate(InvalidateMessage(id: 13, target: .path("users/1", domain: "api"))),
        .invalidate(InvalidateMessage(id: 14, target: .pathPrefix("users/"))),
        .store(StoreMessage(id: 15, key: "GET api users/1", status: 200, body: Data("x".utf8), tags: ["a", "b \"c\""])),
        .watch(WatchMessage(id: 16, target: .pathPrefix("users/", domain: "api"))),
        .unwatch(UnwatchMessage(id: 17, watch: 16)),
        .changed(ChangedMessage(watch: 16, event: .stored, key: "GET api users/1", tags: ["user-1"])),
        .changed(ChangedMessage(watch: 16, event: .invalidated, prefix: "GET api users/")),
        .changed(ChangedMessage(watch: 16, event: .overflow, dropped: 7)),
        .sharedChange(SharedChangeMessage(change: "ab12.7", event: .stored, target: .key("GET api users/1"), tags: ["user-1"])),
        .sharedChange(SharedChangeMessage(change: "ab12.8", event: .invalidated, target: .prefix("GET api users/"))),
        .sharedChange(SharedChangeMessage(change: "ab12.9", event: .invalidated, target: .tag("users"))),
        .status(StatusMessage(id: 12)),
        .scale(ScaleMessage(id: 13, kind: "network", count: 0)),
        .result(ResultMessage(id: 14, data: ["removed": .integer(3), "nested": .object(["ok": .bool(true), "list": .array([.null, .string("x"), .number(1.5)])])])),
        .error(ErrorMessage(code: .unknownType, message: "unknown message type \"x\"", id: 3)),
    ]

    @Test(arguments: everyMessage)
    func everyMessageSurvivesARoundTrip(_ message: WireMessage) throws {
        let payload = codec.encode(message)
        #expect(try codec.decode(payload) == message)
        let object = try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]
        #expect(object?["type"] as? String == message.type)
    }

    @Test func encodesBodiesAsBase64() throws {
        let payload = codec.encode(.response(ResponseMessage(id: 1, status: 200, body: Data([0xff, 0x00, 0x10]))))
        let text = String(decoding: payload, as: UTF8.self)
        #expect(text.contains("\"body\":\"/wAQ\""))
    }

    @Test func namesWhatIsWrong() throws {
        #expect(code(of: "") == .invalidJSON)
        #expect(code(of: "{\"type\":") == .invalidJSON)
        #expect(code(of: "{\"type\":\"ping\"} x") == .invalidJSON)
        #expect(code(of: "[1]") == .notAnObject)
        #expect(code(of: "\"ping\"") == .notAnObject)
        #expect(code(of: "null") == .notAnObject)
        #expect(code(of: "{}") == .missingType)
        #expect(code(of: "{\"type\":5}") == .missingType)
        #expect(code(of: "{\"type\":\"teleport\",\"id\":4}") == .unknownType)
        #expect(code(of: "{\"type\":\"request\",\"path\":\"a\"}") == .missingField)
        #expect(code(of: "{\"type\":\"request\",\"id\":1}") == .missingField)
        #expect(code(of: "{\"type\":\"request\",\"id\":\"1\",\"path\":\"a\"}") == .invalidField)
        #expect(code(of: "{\"type\":\"request\",\"id\":-1,\"path\":\"a\"}") == .invalidField)
        #expect(code(of: "{\"type\":\"request\",\"id\":1.5,\"path\":\"a\"}") == .invalidField)
        #expect(code(of: "{\"type\":\"request\",\"id\":9007199254740992,\"path\":\"a\"}") == .invalidField)
        #expect(code(of: "{\"type\":\"request\",\"id\":1,\"path\":\"a\",\"policy\":\"sometimes\"}") == .invalidField)
        #expect(code(of: "{\"type\":\"request\",\"id\":1,\"path\":\"a\",\"method\":\"get\"}") == .invalidField)
        #expect(code(of: "{\"type\":\"request\",\"id\":1,\"path\":\"a\",\"body\":\"%%%\"}") == .invalidField)
        #expect(code(of: "{\"type\":\"response\",\"id\":1,\"status\":42}") == .invalidField)
        #expect(code(of: "{\"type\":\"hello\",\"version\":1}") == .missingField)
        #expect(code(of: "{\"type\":\"hello\",\"role\":\"admin\",\"version\":1}") == .invalidField)
        #expect(code(of: "{\"type\":\"hello\",\"role\":\"worker\",\"version\":1}") == .missingField)
        #expect(code(of: "{\"type\":\"hello\",\"role\":\"worker\",\"version\":1,\"kind\":\"Cache!\"}") == .invalidField)
        #expect(code(of: "{\"type\":\"hello\",\"role\":\"client\",\"version\":0}") == .invalidField)
        #expect(code(of: "{\"type\":\"invalidate\",\"id\":1}") == .missingField)
        #expect(code(of: "{\"type\":\"invalidate\",\"id\":1,\"key\":\"a\",\"prefix\":\"b\"}") == .invalidField)
        #expect(code(of: "{\"type\":\"scale\",\"id\":1,\"kind\":\"cache\",\"count\":-1}") == .invalidField)
        #expect(code(of: "{\"type\":\"failure\",\"id\":1,\"error\":{\"message\":\"m\"}}") == .missingField)
        #expect(code(of: "{\"type\":\"sharedChange\",\"event\":\"stored\",\"key\":\"k\"}") == .missingField)
        #expect(code(of: "{\"type\":\"sharedChange\",\"change\":\"\",\"event\":\"stored\",\"key\":\"k\"}") == .invalidField)
        #expect(code(of: "{\"type\":\"sharedChange\",\"change\":\"\(String(repeating: "x", count: 129))\",\"event\":\"stored\",\"key\":\"k\"}") == .invalidField)
        #expect(code(of: "{\"type\":\"sharedChange\",\"change\":\"a.1\",\"event\":\"invalidated\"}") == .missingField)
        #expect(code(of: "{\"type\":\"sharedChange\",\"change\":\"a.1\",\"event\":\"invalidated\",\"key\":\"k\",\"prefix\":\"p\"}") == .invalidField)
        #expect(code(of: "{\"type\":\"sharedChange\",\"change\":\"a.1\",\"event\":\"stored\",\"tag\":\"t\"}") == .missingField)
        #expect(code(of: "{\"type\":\"sharedChange\",\"change\":\"a.1\",\"event\":\"invalidated\",\"key\":\"k\",\"tags\":[\"t\"]}") == .invalidField)
        #expect(code(of: "{\"type\":\"sharedChange\",\"change\":\"a.1\",\"event\":\"overflow\",\"key\":\"k\"}") == .invalidField)
    }

    @Test func rejectsInvalidUTF8BeforeParsing() {
        var bytes = Array("{\"type\":\"request\",\"id\":1,\"path\":\"".utf8)
        bytes += [0xc0, 0xaf]
        bytes += Array("\"}".utf8)
        #expect(throws: ProtocolError.self) { try codec.decode(bytes) }
        do {
            _ = try codec.decode(bytes)
        } catch {
            #expect(error.code == .invalidUTF8)
        }
    }

    @Test func errorsCarryTheFieldNameAndTheIdWhenReadable() {
        do {
            _ = try decode("{\"type\":\"request\",\"id\":12,\"path\":\"a\",\"policy\":\"sometimes\"}")
            Issue.record("decoded an invalid policy")
        } catch {
            #expect(error.code == .invalidField)
            #expect(error.message.contains("policy"))
            #expect(error.id == 12)
        }
        do {
            _ = try decode("{\"type\":\"request\",\"id\":3}")
            Issue.record("decoded a request without a path")
        } catch {
            #expect(error.message.contains("\"path\""))
            #expect(error.id == 3)
        }
    }

    @Test func ignoresUnknownFields() throws {
        let message = try decode("{\"type\":\"ping\",\"id\":2,\"futureField\":{\"x\":[1,2]}}")
        #expect(message == .ping(PingMessage(id: 2)))
    }

    @Test func encodeFrameRefusesMessagesOverTheLimit() {
        let small = MessageCodec(maxFrameBytes: 32)
        #expect(throws: FrameError.self) {
            try small.encodeFrame(.request(RequestMessage(id: 1, path: String(repeating: "a", count: 64))))
        }
    }
}
