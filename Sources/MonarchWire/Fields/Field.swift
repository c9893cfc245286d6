#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The kinds of field a ``WireObject`` lists (``FieldKind``), each as section 3 of the protocol
/// says its values look on the wire.
enum Field {
    /// A message id: an integer from 0 to ``MessageIDLimit``.
    enum ID: FieldKind {
        static var schema: FieldSchema { .integer(minimum: 0, maximum: MessageIDLimit) }

        static func read(_ cursor: inout JSONCursor) -> MessageID? {
            cursor.unsignedInteger().flatMap { $0 <= MessageIDLimit ? $0 : nil }
        }

        static func write(_ value: MessageID, to writer: inout JSONWriter) { writer.integer(value) }

        static func decode(from container: KeyedDecodingContainer<AnyCodingKey>, forKey key: AnyCodingKey) throws -> MessageID {
            try container.decodeID(forKey: key)
        }

        static func decodeIfPresent(from container: KeyedDecodingContainer<AnyCodingKey>, forKey key: AnyCodingKey) throws -> MessageID? {
            try container.decodeIDIfPresent(forKey: key)
        }
    }

    /// A non-negative integer (milliseconds, counts) that fits in `UInt64`.
    enum Integer: FieldKind {
        static var schema: FieldSchema { .integer(minimum: 0, maximum: nil) }

        static func read(_ cursor: inout JSONCursor) -> UInt64? { cursor.unsignedInteger() }

        static func write(_ value: UInt64, to writer: inout JSONWriter) { writer.integer(value) }

        static func decode(from container: KeyedDecodingContainer<AnyCodingKey>, forKey key: AnyCodingKey) throws -> UInt64 {
            try container.decodeInteger(UInt64.self, forKey: key)
        }

        static func decodeIfPresent(from container: KeyedDecodingContainer<AnyCodingKey>, forKey key: AnyCodingKey) throws -> UInt64? {
            try container.decodeIntegerIfPresent(UInt64.self, forKey: key)
        }
    }

    /// An HTTP-style status: an integer from 100 to 599.
    enum Status: FieldKind {
        static let range = 100...599

        static var schema: FieldSchema { .integer(minimum: UInt64(range.lowerBound), maximum: UInt64(range.upperBound)) }

        static func read(_ cursor: inout JSONCursor) -> Int? {
            cursor.unsignedInteger().flatMap { $0 <= UInt64(range.upperBound) && range.contains(Int($0)) ? Int($0) : nil }
        }

        static func write(_ value: Int, to writer: inout JSONWriter) { writer.integer(UInt64(clamping: value)) }

        static func decode(from container: KeyedDecodingContainer<AnyCodingKey>, forKey key: AnyCodingKey) throws -> Int {
            try container.decodeInteger(Int.self, forKey: key, in: range)
        }

        static func decodeIfPresent(from container: KeyedDecodingContainer<AnyCodingKey>, forKey key: AnyCodingKey) throws -> Int? {
            try container.decodeIntegerIfPresent(Int.self, forKey: key, in: range)
        }
    }

    /// A string.
    enum Text: FieldKind {
        static var schema: FieldSchema { .string }

        static func read(_ cursor: inout JSONCursor) -> String? { cursor.string() }

        static func write(_ value: String, to writer: inout JSONWriter) { writer.string(value) }
    }

    /// A request method: an uppercase letter, then uppercase letters, digits, `-` and `_`
    /// (``WireProtocol/isValidMethod(_:)``).
    enum Method: FieldKind {
        static let expected = "an uppercase method such as GET or M-SEARCH"

        static var schema: FieldSchema { .pattern("^[A-Z][A-Z0-9_-]*$") }

        static func read(_ cursor: inout JSONCursor) -> String? {
            cursor.string().flatMap { WireProtocol.isValidMethod($0) ? $0 : nil }
        }

        static func write(_ value: String, to writer: inout JSONWriter) { writer.string(value) }

        static func decode(from container: KeyedDecodingContainer<AnyCodingKey>, forKey key: AnyCodingKey) throws -> String {
            guard let method = try decodeIfPresent(from: container, forKey: key) else {
                // Absent or null: let the container say which.
                return try container.decode(String.self, forKey: key)
            }
            return method
        }

        static func decodeIfPresent(from container: KeyedDecodingContainer<AnyCodingKey>, forKey key: AnyCodingKey) throws -> String? {
            try container.decodeStringIfPresent(forKey: key, expected: expected, isValid: WireProtocol.isValidMethod)
        }

        static func encode(_ value: String, to container: inout KeyedEncodingContainer<AnyCodingKey>, forKey key: AnyCodingKey) throws {
            try container.encode(value, forKey: key)
        }
    }

    /// A boolean.
    enum Boolean: FieldKind {
        static var schema: FieldSchema { .boolean }

        static func read(_ cursor: inout JSONCursor) -> Bool? { cursor.bool() }

        static func write(_ value: Bool, to writer: inout JSONWriter) { writer.boolean(value) }
    }

    /// An object of strings, such as headers: names are data, not fields; a name given twice is
    /// left to the full decoder.
    enum StringMap: FieldKind {
        static var schema: FieldSchema { .stringMap }

        static func read(_ cursor: inout JSONCursor) -> [String: String]? { cursor.stringMap() }

        static func write(_ value: [String: String], to writer: inout JSONWriter) {
            writer.raw(UInt8(ascii: "{"))
            var first = true
            for (name, text) in value {
                if !first { writer.raw(UInt8(ascii: ",")) }
                first = false
                writer.string(name)
                writer.raw(UInt8(ascii: ":"))
                writer.string(text)
            }
            writer.raw(UInt8(ascii: "}"))
        }
    }

    /// One of the values of a closed set of strings (the set grows only with a new protocol
    /// version).
    enum Choice<Choices: RawRepresentable & CaseIterable & Codable>: FieldKind where Choices.RawValue == String {
        static var schema: FieldSchema { .choice(Choices.allCases.map(\.rawValue)) }

        static func read(_ cursor: inout JSONCursor) -> Choices? { cursor.string().flatMap(Choices.init(rawValue:)) }

        static func write(_ value: Choices, to writer: inout JSONWriter) { writer.string(value.rawValue) }
    }

    /// A chain failure code: any string (the set is open).
    enum Code: FieldKind {
        static var schema: FieldSchema { .string }

        static func read(_ cursor: inout JSONCursor) -> FailureCode? { cursor.string().map(FailureCode.init(rawValue:)) }

        static func write(_ value: FailureCode, to writer: inout JSONWriter) { writer.string(value.rawValue) }
    }

    /// A body kept as it travels (``MessageBody``): base64 in the JSON, or raw bytes after it.
    enum Body: FieldKind {
        static var isBody: Bool { true }

        static var schema: FieldSchema { .base64 }

        /// Strict, canonical base64 without escapes, kept as its text; anything else (escaped
        /// letters, unused bits set) is left to the full decoder.
        static func read(_ cursor: inout JSONCursor) -> MessageBody? {
            cursor.plainString().flatMap(MessageBody.init(base64:))
        }

        static func write(_ value: MessageBody, to writer: inout JSONWriter) { writer.base64(value) }

        static func decode(from container: KeyedDecodingContainer<AnyCodingKey>, forKey key: AnyCodingKey) throws -> MessageBody {
            MessageBody(try container.decode(Data.self, forKey: key))
        }

        static func decodeIfPresent(from container: KeyedDecodingContainer<AnyCodingKey>, forKey key: AnyCodingKey) throws -> MessageBody? {
            try container.decodeIfPresent(Data.self, forKey: key).map(MessageBody.init)
        }

        static func encode(_ value: MessageBody, to container: inout KeyedEncodingContainer<AnyCodingKey>, forKey key: AnyCodingKey) throws {
            try container.encode(value.bytes, forKey: key)
        }
    }

    /// A body as its bytes, decoded from base64 as it is read.
    enum BodyBytes: FieldKind {
        static var isBody: Bool { true }

        static var schema: FieldSchema { Body.schema }

        static func read(_ cursor: inout JSONCursor) -> Data? { Body.read(&cursor)?.bytes }

        static func write(_ value: Data, to writer: inout JSONWriter) { writer.base64(MessageBody(value)) }
    }

    /// A nested object with fields of its own (a query item, a failure's `error`).
    enum Object<Fields: WireObject>: FieldKind {
        static var schema: FieldSchema { .object(Fields.fieldDescriptions) }

        static func read(_ cursor: inout JSONCursor) -> Fields? {
            ObjectReader.reading(&cursor) { reader, _ in reader.read(Fields.self) }
        }

        static func write(_ value: Fields, to writer: inout JSONWriter) { writer.object(value) }
    }

    /// An array of values of one kind.
    enum List<Element: FieldKind>: FieldKind where Element.Value: Codable {
        static var schema: FieldSchema { .list(Element.schema) }

        static func read(_ cursor: inout JSONCursor) -> [Element.Value]? {
            guard cursor.consume(UInt8(ascii: "[")) else { return nil }
            var items: [Element.Value] = []
            if cursor.consume(UInt8(ascii: "]")) { return items }
            repeat {
                guard let item = Element.read(&cursor) else { return nil }
                items.append(item)
            } while cursor.consume(UInt8(ascii: ","))
            return cursor.consume(UInt8(ascii: "]")) ? items : nil
        }

        static func write(_ value: [Element.Value], to writer: inout JSONWriter) {
            writer.raw(UInt8(ascii: "["))
            for (index, item) in value.enumerated() {
                if index > 0 { writer.raw(UInt8(ascii: ",")) }
                Element.write(item, to: &writer)
            }
            writer.raw(UInt8(ascii: "]"))
        }
    }
}
