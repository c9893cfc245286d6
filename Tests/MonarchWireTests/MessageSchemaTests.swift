import Foundation
import Testing
@testable import MonarchWire

/// Every message type's JSON schema in Protocols/schemas/ against what ``MessageCodec`` does
/// with the type, from the outside: the fields it writes, the fields it reads, and the fields
/// whose absence it refuses are the ones the schema lists and requires.
@Suite struct MessageSchemaTests {
    /// Messages of every type; over the samples of a type, every optional property is set at
    /// least once (``samplesSetEveryProperty()``), so the fields they are written with are
    /// every field the type writes.
    static let samples: [WireMessage] = [
        .hello(Hello(
            role: .worker, token: "t", kind: "cache", capacity: 64, hostCapacity: 128, pid: 42, name: "cache-1",
            features: [WireFeature.rawBodies])),
        .hello(Hello(role: .client, kind: "cache")),
        .welcome(Welcome(
            maxFrameBytes: 1 << 24, workerId: "cache-1", heartbeatMs: 5000, origin: "o-1", features: [WireFeature.rawBodies],
            release: "0.7.0", uptimeMs: 12)),
        .request(RequestMessage(
            id: 7, path: "users/1", domain: "api", query: [QueryItem(name: "page", value: "2")], method: "POST",
            headers: ["accept": "*/*"], body: Data([0, 1, 2]), policy: .networkFirst, deadlineMs: 5000, params: ["id": "1"],
            upstream: "http://127.0.0.1:8080/users/1", ttlMs: 60000, key: "GET api users/1", relay: true)),
        .response(ResponseMessage(
            id: 7, status: 200, source: "cache", headers: ["a": "b"], body: Data("hi".utf8), stale: true, ageMs: 1200,
            ttlMs: 60000, cacheable: false)),
        .miss(MissMessage(id: 7, source: "bundle", reason: "no such file")),
        .failure(FailureMessage(id: 7, error: .init(code: .exhausted, message: "m", attempts: [.init(provider: "cache", outcome: .miss)]))),
        .cancel(CancelMessage(id: 7)),
        .ping(PingMessage(id: 1)),
        .pong(PongMessage(id: 1)),
        .store(StoreMessage(
            id: 9, key: "k", status: 200, headers: ["a": "b"], ttlMs: 10, content: MessageBody(Data("x".utf8)), tags: ["t"],
            variant: "accept:*/*")),
        .invalidate(InvalidateMessage(id: 10, target: .key("k"), soft: true)),
        .invalidate(InvalidateMessage(id: 11, target: .prefix("GET api users/"))),
        .invalidate(InvalidateMessage(id: 12, target: .tag("user-1"))),
        .invalidate(InvalidateMessage(id: 13, target: .path("users/1", domain: "api"))),
        .invalidate(InvalidateMessage(id: 14, target: .pathPrefix("users/", domain: "api"))),
        .status(StatusMessage(id: 15)),
        .scale(ScaleMessage(id: 16, kind: "network", count: 2)),
        .result(ResultMessage(id: 17, data: ["removed": .integer(3)])),
        .error(ErrorMessage(code: .unknownType, message: "unknown message type \"x\"", id: 3)),
        .watch(WatchMessage(id: 18, target: .key("k"))),
        .watch(WatchMessage(id: 19, target: .prefix("GET api users/"))),
        .watch(WatchMessage(id: 20, target: .tag("user-1"))),
        .watch(WatchMessage(id: 21, target: .path("users/1", domain: "api"))),
        .watch(WatchMessage(id: 22, target: .pathPrefix("users/", domain: "api"))),
        .unwatch(UnwatchMessage(id: 23, watch: 18)),
        .changed(ChangedMessage(watch: 18, event: .stored, key: "k", prefix: "p", tag: "t", tags: ["t"], dropped: 1)),
        .sharedChange(SharedChangeMessage(change: "ab.1", event: .stored, target: .key("k"), tags: ["t"])),
        .sharedChange(SharedChangeMessage(change: "ab.2", event: .invalidated, target: .key("k"))),
        .sharedChange(SharedChangeMessage(change: "ab.3", event: .invalidated, target: .prefix("GET api "))),
        .sharedChange(SharedChangeMessage(change: "ab.4", event: .invalidated, target: .tag("t"))),
    ]

    /// The samples of message type `type`, each as its JSON object.
    static func objects(of type: String) throws -> [[String: Any]] {
        try samples.filter { $0.type == type }.map { message in
            try #require(JSONSerialization.jsonObject(with: Data(MessageCodec().encode(message))) as? [String: Any])
        }
    }

    /// How decoding `object` ends: nil when it decodes, else the protocol error's code.
    static func outcome(_ object: [String: Any]) throws -> ProtocolErrorCode? {
        let payload = Array(try JSONSerialization.data(withJSONObject: object))
        do {
            _ = try MessageCodec().decode(payload)
            return nil
        } catch {
            return error.code
        }
    }

    @Test("The samples cover every type, and set every optional property of each at least once")
    func samplesSetEveryProperty() {
        #expect(Set(Self.samples.map(\.type)) == WireMessage.knownTypes)
        var unset: [String: Set<String>] = [:]
        var set: [String: Set<String>] = [:]
        for message in Self.samples {
            // The case's associated value: the message's struct.
            guard let payload = Mirror(reflecting: message).children.first?.value else { continue }
            for property in Mirror(reflecting: payload).children {
                guard let label = property.label else { continue }
                let value = Mirror(reflecting: property.value)
                if value.displayStyle == .optional && value.children.isEmpty {
                    unset[message.type, default: []].insert(label)
                } else {
                    set[message.type, default: []].insert(label)
                }
            }
        }
        for (type, labels) in unset {
            let missing = labels.subtracting(set[type] ?? [])
            #expect(missing.isEmpty, "\(type): no sample sets \(missing.sorted())")
        }
    }

    @Test("Each type is written with exactly the fields its schema lists", arguments: WireMessage.knownTypes.sorted())
    func writesTheSchemaFields(type: String) throws {
        let schema = try ProtocolSchema.load(type)
        let written = Set(try Self.objects(of: type).flatMap(\.keys)).subtracting(["type"])
        #expect(written == schema.fieldNames, "written: \(written.sorted()), schema: \(schema.fieldNames.sorted())")
    }

    @Test("Each type reads every field its schema lists: a value of no valid type there is invalidField", arguments: WireMessage.knownTypes.sorted())
    func readsTheSchemaFields(type: String) throws {
        let schema = try ProtocolSchema.load(type)
        let objects = try Self.objects(of: type)
        for name in schema.fieldNames.sorted() {
            var object = try #require(objects.first { $0[name] != nil }, "no sample of \(type) has \(name)")
            object[name] = [[[Int]]]([[[]]])
            #expect(try Self.outcome(object) == .invalidField, "\(type).\(name) is not read")
        }
    }

    @Test("A field is refused as missing exactly where the schema requires it", arguments: WireMessage.knownTypes.sorted())
    func requiresTheSchemaFields(type: String) throws {
        let schema = try ProtocolSchema.load(type)
        let objects = try Self.objects(of: type)
        for name in schema.fieldNames.sorted() {
            // How each sample that has the field decodes without it; and whether one without it decodes.
            var withoutIt: [ProtocolErrorCode?] = []
            var decodesWithoutIt = false
            for object in objects {
                var removed = object
                let had = removed.removeValue(forKey: name) != nil
                let outcome = try Self.outcome(removed)
                if had { withoutIt.append(outcome) }
                if outcome == nil { decodesWithoutIt = true }
            }
            if schema.requiredNames.contains(name) {
                #expect(withoutIt.count == objects.count, "\(type).\(name) is required, but not every sample has it")
                #expect(withoutIt.allSatisfy { $0 == .missingField }, "\(type).\(name) is required by the schema, not by the codec")
            } else if schema.conditionallyRequiredNames.contains(name) {
                #expect(withoutIt.contains(.missingField), "\(type).\(name) is sometimes required by the schema, never by the codec")
                #expect(decodesWithoutIt, "\(type).\(name) is sometimes optional in the schema, never in the codec")
            } else {
                #expect(withoutIt.allSatisfy { $0 == nil }, "\(type).\(name) is optional in the schema, not in the codec: \(withoutIt)")
            }
        }
    }
}
