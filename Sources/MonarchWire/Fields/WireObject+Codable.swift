extension WireObject {
    /// Decodes the object from the fields of a keyed container, in the order its list declares
    /// them, each through its kind (``FieldKind/decode(from:forKey:)``).
    ///
    /// - Throws: `DecodingError` naming the first field that is missing (a required one) or
    ///   invalid; unknown fields are ignored.
    public init(from decoder: any Decoder) throws {
        var reader = ContainerFieldReader(container: try decoder.container(keyedBy: AnyCodingKey.self))
        var value = Self.placeholder
        try Self.fields(&reader, &value)
        self = value
    }

    /// Encodes the object's fields into a keyed container, absent optional fields left out.
    ///
    /// - Throws: what the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var writer = ContainerFieldWriter(container: encoder.container(keyedBy: AnyCodingKey.self))
        var value = self
        try Self.fields(&writer, &value)
    }
}

/// Decodes a ``WireObject``'s fields from a `Codable` keyed container.
private struct ContainerFieldReader: FieldVisitor {
    typealias Failure = any Error

    let container: KeyedDecodingContainer<AnyCodingKey>

    mutating func required<Kind: FieldKind>(_ name: StaticString, _ value: inout Kind.Value, _ kind: Kind.Type) throws {
        value = try Kind.decode(from: container, forKey: AnyCodingKey(name))
    }

    mutating func optional<Kind: FieldKind>(_ name: StaticString, _ value: inout Kind.Value?, _ kind: Kind.Type) throws {
        value = try Kind.decodeIfPresent(from: container, forKey: AnyCodingKey(name))
    }
}

/// Encodes a ``WireObject``'s fields into a `Codable` keyed container.
private struct ContainerFieldWriter: FieldVisitor {
    typealias Failure = any Error

    var container: KeyedEncodingContainer<AnyCodingKey>

    mutating func required<Kind: FieldKind>(_ name: StaticString, _ value: inout Kind.Value, _ kind: Kind.Type) throws {
        try Kind.encode(value, to: &container, forKey: AnyCodingKey(name))
    }

    mutating func optional<Kind: FieldKind>(_ name: StaticString, _ value: inout Kind.Value?, _ kind: Kind.Type) throws {
        guard let value else { return }
        try Kind.encode(value, to: &container, forKey: AnyCodingKey(name))
    }
}

extension AnyCodingKey {
    /// The key of the field named `name`.
    init(_ name: StaticString) {
        stringValue = name.description
    }
}
