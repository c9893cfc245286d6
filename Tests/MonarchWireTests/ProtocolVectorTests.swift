import Foundation
import Testing
@testable import MonarchWire

/// The test vectors of Protocols/vectors/frames.json, the same ones a client in another
/// language is written against.
struct ProtocolVector: Decodable, Sendable, CustomTestStringConvertible {
    struct Expectation: Decodable, Sendable {
        var messages: [JSONValue]
        var error: String?
    }

    var name: String
    var description: String
    var hex: String
    var maxFrameBytes: Int?
    /// Whether the receiver agreed to the rawBodies extension.
    var rawBodies: Bool?
    var expect: Expectation

    var testDescription: String { name }

    var bytes: [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    static let all: [ProtocolVector] = {
        struct File: Decodable {
            var version: Int
            var defaultMaxFrameBytes: Int
            var vectors: [ProtocolVector]
        }
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Protocols/vectors/frames.json")
        do {
            let file = try JSONDecoder().decode(File.self, from: Data(contentsOf: url))
            precondition(file.defaultMaxFrameBytes == FrameDecoder.defaultMaxFrameBytes)
            return file.vectors
        } catch {
            // An unreadable vector file must fail the run, never skip it.
            fatalError("cannot read the protocol vectors at \(url.path): \(error)")
        }
    }()
}

/// What a stream of bytes decoded to: messages, then possibly a protocol error.
struct StreamOutcome: Equatable {
    var messages: [WireMessage] = []
    var error: ProtocolErrorCode?
}

@Suite struct ProtocolVectorTests {
    /// Decodes `bytes` fed in chunks of `chunkSize` bytes, as a connection would.
    static func decode(_ bytes: [UInt8], chunkSize: Int, maxFrameBytes: Int, rawBodies: Bool = false) -> StreamOutcome {
        var decoder = FrameDecoder(maxFrameBytes: maxFrameBytes)
        let codec = MessageCodec(maxFrameBytes: maxFrameBytes, rawBodies: rawBodies)
        var outcome = StreamOutcome()
        do {
            var offset = 0
            repeat {
                let end = min(bytes.count, offset + chunkSize)
                decoder.append(contentsOf: bytes[offset..<end])
                offset = end
                while let payload = try decoder.nextFrame() {
                    outcome.messages.append(try codec.decode(payload))
                }
            } while offset < bytes.count
            try decoder.finish()
        } catch let error as FrameError {
            outcome.error = ProtocolError(error).code
        } catch let error as ProtocolError {
            outcome.error = error.code
        } catch {
            Issue.record("unexpected error \(error)")
        }
        return outcome
    }

    @Test func theVectorFileCoversEveryMessageTypeAndEveryErrorCode() {
        let vectors = ProtocolVector.all
        #expect(vectors.count >= 40)
        let types = Set(vectors.flatMap { $0.expect.messages }.compactMap { value -> String? in
            if case .object(let object) = value, case .string(let type)? = object["type"] { return type }
            return nil
        })
        #expect(types == WireMessage.knownTypes)
        let frameLevel: Set<ProtocolErrorCode> = [
            .oversizedFrame, .truncatedFrame, .invalidUTF8, .invalidJSON, .notAnObject, .missingType, .unknownType,
            .missingField, .invalidField,
        ]
        let covered = Set(vectors.compactMap { $0.expect.error }.compactMap(ProtocolErrorCode.init(rawValue:)))
        #expect(frameLevel.isSubset(of: covered))
        #expect(Set(vectors.map(\.name)).count == vectors.count, "vector names are unique")
    }

    @Test(arguments: ProtocolVector.all)
    func decodesAsTheVectorSays(_ vector: ProtocolVector) throws {
        let bytes = vector.bytes
        let limit = vector.maxFrameBytes ?? FrameDecoder.defaultMaxFrameBytes
        let raw = vector.rawBodies ?? false
        let whole = Self.decode(bytes, chunkSize: max(1, bytes.count), maxFrameBytes: limit, rawBodies: raw)
        let byteByByte = Self.decode(bytes, chunkSize: 1, maxFrameBytes: limit, rawBodies: raw)
        #expect(whole == byteByByte, "feeding byte by byte changed the outcome")

        #expect(whole.error?.rawValue == vector.expect.error)
        try #require(whole.messages.count == vector.expect.messages.count)
        for (message, expected) in zip(whole.messages, vector.expect.messages) {
            try expectSameFields(message, as: expected)
        }
    }

    /// Every field the codec writes for `message` has the vector's value, and every field of
    /// the vector that the codec left out is null or one this protocol version does not define.
    private func expectSameFields(_ message: WireMessage, as expected: JSONValue) throws {
        let encoded = try JSONDecoder().decode(JSONValue.self, from: Data(MessageCodec().encode(message)))
        #expect(Self.matches(encoded, expected), "\(message.type): re-encoded as \(encoded), vector has \(expected)")
    }

    /// Whether `ours` (the codec's JSON) says what `theirs` (the vector's JSON) says.
    static func matches(_ ours: JSONValue, _ theirs: JSONValue) -> Bool {
        switch (ours, theirs) {
        case (.integer(let x), .number(let y)), (.number(let y), .integer(let x)):
            return Double(x) == y
        case (.object(let x), .object(let y)):
            let sameKnown = x.allSatisfy { key, value in matches(value, y[key] ?? .null) }
            let droppedOnlyUnknown = y.allSatisfy { key, value in
                x[key] != nil || value == .null || !definedFields.contains(key)
            }
            return sameKnown && droppedOnlyUnknown
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { matches($0, $1) }
        default:
            return ours == theirs
        }
    }

    /// Every field name the protocol defines, on any message.
    static let definedFields: Set<String> = [
        "type", "id", "role", "version", "token", "kind", "capacity", "pid", "name", "maxFrameBytes", "workerId",
        "heartbeatMs", "path", "domain", "query", "method", "headers", "body", "policy", "deadlineMs", "params",
        "upstream", "ttlMs", "key", "status", "source", "stale", "ageMs", "cacheable", "reason", "error", "prefix",
        "count", "data", "code", "message", "features",
    ]
}
