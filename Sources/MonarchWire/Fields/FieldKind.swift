/// How one kind of field value travels (``Field`` holds the kinds): read from and written to a
/// frame's bytes by the hot codec, decoded and encoded through `Codable` containers by the full
/// codec, and described in the terms of the protocol's JSON schemas.
///
/// The two decoders agree: ``read(_:)`` gives the value ``decode(from:forKey:)`` gives, or nil
/// whenever it is not certain to (the full decoder then decides, and names any defect).
protocol FieldKind {
    /// The Swift type a field of this kind holds.
    associatedtype Value

    /// Whether the field is a message's body, which a raw-body payload (protocol section 2.1)
    /// carries after the JSON instead of in it. False unless a kind says otherwise.
    static var isBody: Bool { get }

    /// What the protocol's JSON schemas say of a value of this kind.
    static var schema: FieldSchema { get }

    /// The value at `cursor`, the cursor moved past it; nil when the JSON there is not a valid
    /// value of this kind, or not one read here with certainty. `null` is never a value.
    static func read(_ cursor: inout JSONCursor) -> Value?

    /// Appends the value's JSON to `writer`.
    static func write(_ value: Value, to writer: inout JSONWriter)

    /// Decodes the value of field `key`.
    ///
    /// - Throws: `DecodingError` when the field is absent, `null` or not a valid value.
    static func decode(from container: KeyedDecodingContainer<AnyCodingKey>, forKey key: AnyCodingKey) throws -> Value

    /// Decodes the value of field `key`, nil when the field is absent or `null`.
    ///
    /// - Throws: `DecodingError` when the field holds something else than a valid value.
    static func decodeIfPresent(from container: KeyedDecodingContainer<AnyCodingKey>, forKey key: AnyCodingKey) throws -> Value?

    /// Encodes `value` as field `key`.
    ///
    /// - Throws: what the container throws.
    static func encode(_ value: Value, to container: inout KeyedEncodingContainer<AnyCodingKey>, forKey key: AnyCodingKey) throws
}

extension FieldKind {
    static var isBody: Bool { false }
}

extension FieldKind where Value: Codable {
    static func decode(from container: KeyedDecodingContainer<AnyCodingKey>, forKey key: AnyCodingKey) throws -> Value {
        try container.decode(Value.self, forKey: key)
    }

    static func decodeIfPresent(from container: KeyedDecodingContainer<AnyCodingKey>, forKey key: AnyCodingKey) throws -> Value? {
        try container.decodeIfPresent(Value.self, forKey: key)
    }

    static func encode(_ value: Value, to container: inout KeyedEncodingContainer<AnyCodingKey>, forKey key: AnyCodingKey) throws {
        try container.encode(value, forKey: key)
    }
}
