#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The messages every request and answer is made of — `request`, `response`, `miss`,
/// `failure`, `cancel`, `ping`, `pong`, and the cache's `store` — read and written straight
/// from and to a frame's bytes, without Codable's machinery; a body read from a frame is
/// kept as its base64 text (``MessageBody``), so forwarding it costs a copy, not a decode and
/// an encode.
///
/// Decoding gives the very value ``MessageCodec``'s full decoder gives, or nil when the payload
/// is anything else or anything out of the ordinary (another type, an invalid or unusual field,
/// a name given twice, non-canonical base64): the full decoder then decides, and names the
/// defect. Encoding writes JSON that decodes to the same message; other types are not written.
enum HotMessageCodec {
    // MARK: Decoding

    /// One top-level field of an object: its name's bytes and where its value starts.
    private typealias Field = (name: UnsafeRawBufferPointer, value: Int)

    /// The top-level fields of an object, in storage that lives only while it is decoded.
    private struct Fields {
        /// The most fields read here; a wider object is left to the full decoder.
        static let capacity = 32

        let storage: UnsafeMutableBufferPointer<Field>
        var count = 0

        var entries: UnsafeMutableBufferPointer<Field>.SubSequence { storage[..<count] }

        mutating func append(_ field: Field) {
            storage.initializeElement(at: count, to: field)
            count += 1
        }

        /// A cursor at the value of `name`, or nil when the field is absent.
        func value(_ name: StaticString, in bytes: UnsafeRawBufferPointer) -> JSONCursor? {
            name.withUTF8Buffer { expected in
                for entry in entries where entry.name.count == expected.count {
                    if entry.name.elementsEqual(UnsafeRawBufferPointer(expected)) { return JSONCursor(bytes, at: entry.value) }
                }
                return nil
            }
        }
    }

    /// The message in `payload` (already checked to be valid UTF-8), or nil to leave it to the
    /// full decoder.
    static func decode(_ payload: UnsafeRawBufferPointer) -> WireMessage? {
        // The fields are noted on the stack: no allocation per message.
        withUnsafeTemporaryAllocation(of: Field.self, capacity: Fields.capacity) { storage in
            decode(payload, fields: Fields(storage: storage))
        }
    }

    private static func decode(_ payload: UnsafeRawBufferPointer, fields: Fields) -> WireMessage? {
        var fields = fields
        var cursor = JSONCursor(payload)
        guard cursor.consume(UInt8(ascii: "{")) else { return nil }
        if !cursor.consume(UInt8(ascii: "}")) {
            repeat {
                guard let name = cursor.plainKey(), cursor.consume(UInt8(ascii: ":")) else { return nil }
                cursor.skipSpace()
                let start = cursor.index
                guard cursor.skipValue() else { return nil }
                // A name given twice is left to the full decoder, as is a very wide object.
                guard fields.count < Fields.capacity, !fields.entries.contains(where: { $0.name.elementsEqual(name) }) else {
                    return nil
                }
                fields.append((name, start))
            } while cursor.consume(UInt8(ascii: ","))
            guard cursor.consume(UInt8(ascii: "}")) else { return nil }
        }
        cursor.skipSpace()
        guard cursor.isAtEnd, var typeCursor = fields.value("type", in: payload), let type = typeCursor.string() else {
            return nil
        }
        let reader = FieldReader(fields: fields, bytes: payload)
        switch type {
        case "request": return reader.request().map(WireMessage.request)
        case "response": return reader.response().map(WireMessage.response)
        case "miss": return reader.miss().map(WireMessage.miss)
        case "store": return reader.store().map(WireMessage.store)
        case "failure": return reader.failure().map(WireMessage.failure)
        case "cancel": return reader.id().map { .cancel(CancelMessage(id: $0)) }
        case "ping": return reader.optionalID().map { .ping(PingMessage(id: $0)) }
        case "pong": return reader.optionalID().map { .pong(PongMessage(id: $0)) }
        default: return nil
        }
    }

    /// Reads the fields of one message, each as its type's full decoder would.
    private struct FieldReader {
        let fields: Fields
        let bytes: UnsafeRawBufferPointer

        /// A field's value: `.absent` when missing or null, `.bad` when unreadable here.
        enum Value<T> {
            case absent
            case value(T)
            case bad
        }

        func optional<T>(_ name: StaticString, _ read: (inout JSONCursor) -> T?) -> Value<T> {
            guard var cursor = fields.value(name, in: bytes) else { return .absent }
            if cursor.consumeNull() { return .absent }
            return read(&cursor).map(Value.value) ?? .bad
        }

        func id() -> MessageID? {
            guard case .value(let id) = optional("id", { $0.unsignedInteger() }), id <= MessageIDLimit else { return nil }
            return id
        }

        /// `.some(nil)` for an absent id, nil for an unreadable one.
        func optionalID() -> MessageID?? {
            switch optional("id", { $0.unsignedInteger() }) {
            case .absent: return .some(nil)
            case .value(let id) where id <= MessageIDLimit: return .some(id)
            default: return nil
            }
        }

        func request() -> RequestMessage? {
            guard let id = id(), case .value(let path) = optional("path", { $0.string() }) else { return nil }
            var message = RequestMessage(id: id, path: path)
            guard read("domain", into: &message.domain, { $0.string() }),
                read("query", into: &message.query, Self.queryItems),
                read("method", into: &message.method, { cursor in cursor.string().flatMap { WireProtocol.isValidMethod($0) ? $0 : nil } }),
                read("headers", into: &message.headers, { $0.stringMap() }),
                read("body", into: &message.body, Self.base64),
                read("policy", into: &message.policy, { cursor in cursor.string().flatMap(CachePolicy.init(rawValue:)) }),
                read("deadlineMs", into: &message.deadlineMs, { $0.unsignedInteger() }),
                read("params", into: &message.params, { $0.stringMap() }),
                read("upstream", into: &message.upstream, { $0.string() }),
                read("ttlMs", into: &message.ttlMs, { $0.unsignedInteger() }),
                read("key", into: &message.key, { $0.string() }),
                read("relay", into: &message.relay, { $0.bool() })
            else { return nil }
            return message
        }

        func response() -> ResponseMessage? {
            guard let id = id(), case .value(let status) = optional("status", { $0.unsignedInteger() }),
                (100...599).contains(status)
            else { return nil }
            var message = ResponseMessage(id: id, status: Int(status))
            guard read("source", into: &message.source, { $0.string() }),
                read("headers", into: &message.headers, { $0.stringMap() }),
                read("body", into: &message.content, Self.body),
                read("stale", into: &message.stale, { $0.bool() }),
                read("ageMs", into: &message.ageMs, { $0.unsignedInteger() }),
                read("ttlMs", into: &message.ttlMs, { $0.unsignedInteger() }),
                read("cacheable", into: &message.cacheable, { $0.bool() })
            else { return nil }
            return message
        }

        func store() -> StoreMessage? {
            guard let id = id(), case .value(let key) = optional("key", { $0.string() }),
                case .value(let status) = optional("status", { $0.unsignedInteger() }), (100...599).contains(status)
            else { return nil }
            var message = StoreMessage(id: id, key: key, status: Int(status))
            guard read("headers", into: &message.headers, { $0.stringMap() }),
                read("body", into: &message.content, Self.body),
                read("ttlMs", into: &message.ttlMs, { $0.unsignedInteger() }),
                read("tags", into: &message.tags, { $0.stringArray() }),
                read("variant", into: &message.variant, { $0.string() })
            else { return nil }
            return message
        }

        func miss() -> MissMessage? {
            guard let id = id() else { return nil }
            var message = MissMessage(id: id)
            guard read("source", into: &message.source, { $0.string() }),
                read("reason", into: &message.reason, { $0.string() })
            else { return nil }
            return message
        }

        func failure() -> FailureMessage? {
            guard let id = id(), case .value(let detail) = optional("error", Self.detail) else { return nil }
            return FailureMessage(id: id, error: detail)
        }

        /// Reads optional field `name` into `target`; false when it is there and unreadable.
        private func read<T>(_ name: StaticString, into target: inout T?, _ reader: (inout JSONCursor) -> T?) -> Bool {
            switch optional(name, reader) {
            case .absent: return true
            case .value(let value):
                target = value
                return true
            case .bad: return false
            }
        }

        /// A strict, canonical base64 string without escapes, kept as it is.
        static func body(_ cursor: inout JSONCursor) -> MessageBody? {
            cursor.plainString().flatMap(MessageBody.init(base64:))
        }

        /// A strict, canonical base64 string without escapes, decoded.
        static func base64(_ cursor: inout JSONCursor) -> Data? {
            body(&cursor)?.bytes
        }

        /// An array of query items: `{"name": string, "value": string or null}`, other members skipped.
        static func queryItems(_ cursor: inout JSONCursor) -> [QueryItem]? {
            guard cursor.consume(UInt8(ascii: "[")) else { return nil }
            var items: [QueryItem] = []
            if cursor.consume(UInt8(ascii: "]")) { return items }
            repeat {
                guard let item = queryItem(&cursor) else { return nil }
                items.append(item)
            } while cursor.consume(UInt8(ascii: ","))
            return cursor.consume(UInt8(ascii: "]")) ? items : nil
        }

        private static func queryItem(_ cursor: inout JSONCursor) -> QueryItem? {
            guard cursor.consume(UInt8(ascii: "{")) else { return nil }
            var name: String?
            var value: String?
            var seen: Set<String> = []
            if !cursor.consume(UInt8(ascii: "}")) {
                repeat {
                    guard let key = cursor.string(), seen.insert(key).inserted, cursor.consume(UInt8(ascii: ":")) else { return nil }
                    switch key {
                    case "name":
                        guard let text = cursor.string() else { return nil }
                        name = text
                    case "value":
                        if cursor.consumeNull() { continue }
                        guard let text = cursor.string() else { return nil }
                        value = text
                    default:
                        guard cursor.skipValue() else { return nil }
                    }
                } while cursor.consume(UInt8(ascii: ","))
                guard cursor.consume(UInt8(ascii: "}")) else { return nil }
            }
            return name.map { QueryItem(name: $0, value: value) }
        }

        /// A failure's `error`: `code`, `message`, and `attempts` when given.
        static func detail(_ cursor: inout JSONCursor) -> FailureMessage.Detail? {
            guard cursor.consume(UInt8(ascii: "{")) else { return nil }
            var code: FailureCode?
            var message: String?
            var attempts: [FailureMessage.Attempt]?
            var seen: Set<String> = []
            if !cursor.consume(UInt8(ascii: "}")) {
                repeat {
                    guard let key = cursor.string(), seen.insert(key).inserted, cursor.consume(UInt8(ascii: ":")) else { return nil }
                    switch key {
                    case "code": guard let text = cursor.string() else { return nil }; code = FailureCode(rawValue: text)
                    case "message": guard let text = cursor.string() else { return nil }; message = text
                    case "attempts":
                        if cursor.consumeNull() { continue }
                        guard let list = attemptList(&cursor) else { return nil }
                        attempts = list
                    default: guard cursor.skipValue() else { return nil }
                    }
                } while cursor.consume(UInt8(ascii: ","))
                guard cursor.consume(UInt8(ascii: "}")) else { return nil }
            }
            guard let code, let message else { return nil }
            return FailureMessage.Detail(code: code, message: message, attempts: attempts)
        }

        private static func attemptList(_ cursor: inout JSONCursor) -> [FailureMessage.Attempt]? {
            guard cursor.consume(UInt8(ascii: "[")) else { return nil }
            var list: [FailureMessage.Attempt] = []
            if cursor.consume(UInt8(ascii: "]")) { return list }
            repeat {
                guard let attempt = attempt(&cursor) else { return nil }
                list.append(attempt)
            } while cursor.consume(UInt8(ascii: ","))
            return cursor.consume(UInt8(ascii: "]")) ? list : nil
        }

        private static func attempt(_ cursor: inout JSONCursor) -> FailureMessage.Attempt? {
            guard cursor.consume(UInt8(ascii: "{")) else { return nil }
            var provider: String?
            var outcome: FailureMessage.Attempt.Outcome?
            var code: FailureCode?
            var message: String?
            var seen: Set<String> = []
            if !cursor.consume(UInt8(ascii: "}")) {
                repeat {
                    guard let key = cursor.string(), seen.insert(key).inserted, cursor.consume(UInt8(ascii: ":")) else { return nil }
                    switch key {
                    case "provider": guard let text = cursor.string() else { return nil }; provider = text
                    case "outcome":
                        guard let text = cursor.string(), let value = FailureMessage.Attempt.Outcome(rawValue: text) else { return nil }
                        outcome = value
                    case "code":
                        if cursor.consumeNull() { continue }
                        guard let text = cursor.string() else { return nil }
                        code = FailureCode(rawValue: text)
                    case "message":
                        if cursor.consumeNull() { continue }
                        guard let text = cursor.string() else { return nil }
                        message = text
                    default: guard cursor.skipValue() else { return nil }
                    }
                } while cursor.consume(UInt8(ascii: ","))
                guard cursor.consume(UInt8(ascii: "}")) else { return nil }
            }
            guard let provider, let outcome else { return nil }
            return FailureMessage.Attempt(provider: provider, outcome: outcome, code: code, message: message)
        }
    }

    // MARK: Encoding

    /// Appends the JSON of `message` to `output`, without its `body` field when `withBody` is
    /// false; false (and nothing appended) for a type this codec does not write.
    static func encode(_ message: WireMessage, into output: inout [UInt8], withBody: Bool = true) -> Bool {
        // The writer takes the buffer over (no copy), and gives it back when done.
        var writer = JSONWriter(output: [])
        swap(&writer.output, &output)
        defer { swap(&writer.output, &output) }
        let start = writer.output.count
        switch message {
        case .request(let request):
            writer.begin(type: "request")
            writer.field("id", request.id)
            writer.field("path", request.path)
            writer.field("domain", request.domain)
            if let query = request.query {
                writer.key("query")
                writer.raw(UInt8(ascii: "["))
                for (index, item) in query.enumerated() {
                    if index > 0 { writer.raw(UInt8(ascii: ",")) }
                    writer.raw(UInt8(ascii: "{"))
                    writer.string("name")
                    writer.raw(UInt8(ascii: ":"))
                    writer.string(item.name)
                    if let value = item.value {
                        writer.raw(UInt8(ascii: ","))
                        writer.string("value")
                        writer.raw(UInt8(ascii: ":"))
                        writer.string(value)
                    }
                    writer.raw(UInt8(ascii: "}"))
                }
                writer.raw(UInt8(ascii: "]"))
            }
            writer.field("method", request.method)
            writer.field("headers", request.headers)
            if withBody { writer.field("body", request.body) }
            writer.field("policy", request.policy?.rawValue)
            writer.field("deadlineMs", request.deadlineMs)
            writer.field("params", request.params)
            writer.field("upstream", request.upstream)
            writer.field("ttlMs", request.ttlMs)
            writer.field("key", request.key)
            writer.field("relay", request.relay)
        case .response(let response):
            writer.begin(type: "response")
            writer.field("id", response.id)
            writer.field("status", UInt64(clamping: response.status))
            writer.field("source", response.source)
            writer.field("headers", response.headers)
            if withBody { writer.field("body", response.content) }
            writer.field("stale", response.stale)
            writer.field("ageMs", response.ageMs)
            writer.field("ttlMs", response.ttlMs)
            writer.field("cacheable", response.cacheable)
        case .store(let store):
            writer.begin(type: "store")
            writer.field("id", store.id)
            writer.field("key", store.key)
            writer.field("status", UInt64(clamping: store.status))
            writer.field("headers", store.headers)
            if withBody { writer.field("body", store.content) }
            writer.field("ttlMs", store.ttlMs)
            writer.field("tags", store.tags)
            writer.field("variant", store.variant)
        case .miss(let miss):
            writer.begin(type: "miss")
            writer.field("id", miss.id)
            writer.field("source", miss.source)
            writer.field("reason", miss.reason)
        case .failure(let failure):
            writer.begin(type: "failure")
            writer.field("id", failure.id)
            writer.key("error")
            writer.raw(UInt8(ascii: "{"))
            writer.string("code")
            writer.raw(UInt8(ascii: ":"))
            writer.string(failure.error.code.rawValue)
            writer.raw(UInt8(ascii: ","))
            writer.string("message")
            writer.raw(UInt8(ascii: ":"))
            writer.string(failure.error.message)
            if let attempts = failure.error.attempts {
                writer.raw(UInt8(ascii: ","))
                writer.string("attempts")
                writer.raw(UInt8(ascii: ":"))
                writer.raw(UInt8(ascii: "["))
                for (index, attempt) in attempts.enumerated() {
                    if index > 0 { writer.raw(UInt8(ascii: ",")) }
                    writer.raw(UInt8(ascii: "{"))
                    writer.string("provider")
                    writer.raw(UInt8(ascii: ":"))
                    writer.string(attempt.provider)
                    writer.raw(UInt8(ascii: ","))
                    writer.string("outcome")
                    writer.raw(UInt8(ascii: ":"))
                    writer.string(attempt.outcome.rawValue)
                    if let code = attempt.code {
                        writer.raw(UInt8(ascii: ","))
                        writer.string("code")
                        writer.raw(UInt8(ascii: ":"))
                        writer.string(code.rawValue)
                    }
                    if let message = attempt.message {
                        writer.raw(UInt8(ascii: ","))
                        writer.string("message")
                        writer.raw(UInt8(ascii: ":"))
                        writer.string(message)
                    }
                    writer.raw(UInt8(ascii: "}"))
                }
                writer.raw(UInt8(ascii: "]"))
            }
            writer.raw(UInt8(ascii: "}"))
        case .cancel(let cancel):
            writer.begin(type: "cancel")
            writer.field("id", cancel.id)
        case .ping(let ping):
            writer.begin(type: "ping")
            writer.field("id", ping.id)
        case .pong(let pong):
            writer.begin(type: "pong")
            writer.field("id", pong.id)
        default:
            writer.output.removeSubrange(start...)
            return false
        }
        writer.raw(UInt8(ascii: "}"))
        return true
    }
}

/// Writes compact JSON: an object's fields after `{"type":…`, each preceded by a comma.
private struct JSONWriter {
    var output: [UInt8]

    mutating func raw(_ byte: UInt8) { output.append(byte) }

    mutating func begin(type: String) {
        raw(UInt8(ascii: "{"))
        string("type")
        raw(UInt8(ascii: ":"))
        string(type)
    }

    mutating func key(_ name: String) {
        raw(UInt8(ascii: ","))
        string(name)
        raw(UInt8(ascii: ":"))
    }

    mutating func field(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    mutating func field(_ name: String, _ value: UInt64?) {
        guard let value else { return }
        key(name)
        output.append(contentsOf: String(value).utf8)
    }

    mutating func field(_ name: String, _ value: Bool?) {
        guard let value else { return }
        key(name)
        output.append(contentsOf: (value ? "true" : "false").utf8)
    }

    mutating func field(_ name: String, _ value: [String: String]?) {
        guard let value else { return }
        key(name)
        raw(UInt8(ascii: "{"))
        var first = true
        for (name, text) in value {
            if !first { raw(UInt8(ascii: ",")) }
            first = false
            string(name)
            raw(UInt8(ascii: ":"))
            string(text)
        }
        raw(UInt8(ascii: "}"))
    }

    mutating func field(_ name: String, _ value: [String]?) {
        guard let value else { return }
        key(name)
        raw(UInt8(ascii: "["))
        for (index, text) in value.enumerated() {
            if index > 0 { raw(UInt8(ascii: ",")) }
            string(text)
        }
        raw(UInt8(ascii: "]"))
    }

    mutating func field(_ name: String, _ value: Data?) {
        field(name, value.map(MessageBody.init))
    }

    mutating func field(_ name: String, _ value: MessageBody?) {
        guard let value else { return }
        key(name)
        raw(UInt8(ascii: "\""))
        value.appendBase64(to: &output)
        raw(UInt8(ascii: "\""))
    }

    /// A JSON string: quotes, backslashes and control characters escaped, everything else as is.
    mutating func string(_ text: String) {
        raw(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for (index, byte) in bytes.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                start = index + 1
                switch byte {
                case 0x22: output.append(contentsOf: [0x5C, 0x22])
                case 0x5C: output.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    output.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        raw(UInt8(ascii: "\""))
    }
}
