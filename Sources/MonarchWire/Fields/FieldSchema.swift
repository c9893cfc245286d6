/// What a field's value is, in the terms of the protocol's JSON schemas (`Protocols/schemas/`),
/// so that a test can hold each ``WireObject``'s field list to its schema.
indirect enum FieldSchema: Equatable, Sendable {
    /// A JSON string.
    case string
    /// A JSON string matching a regular expression (the schema's `pattern`).
    case pattern(String)
    /// A JSON string holding base64 (the schema's `contentEncoding`).
    case base64
    /// A JSON integer from `minimum`, up to `maximum` when there is one.
    case integer(minimum: UInt64, maximum: UInt64?)
    /// A JSON boolean.
    case boolean
    /// A JSON object whose members are all strings (headers, parameters).
    case stringMap
    /// One of these strings (the schema's `enum`).
    case choice([String])
    /// A JSON object with these fields.
    case object([FieldDescription])
    /// A JSON array of values of this kind.
    case list(FieldSchema)
}

/// One field of a ``WireObject``, as its field list declares it.
struct FieldDescription: Equatable, Sendable {
    /// The field's name on the wire.
    var name: String
    /// Whether every object has it (absent: `missingField`; `null`: `invalidField`).
    var required: Bool
    /// What its value is.
    var schema: FieldSchema
}

/// Collects the fields of a ``WireObject`` as its list declares them.
struct FieldLister: FieldVisitor {
    typealias Failure = Never

    /// The fields visited so far, in order.
    private(set) var fields: [FieldDescription] = []

    mutating func required<Kind: FieldKind>(_ name: StaticString, _ value: inout Kind.Value, _ kind: Kind.Type) {
        fields.append(FieldDescription(name: name.description, required: true, schema: Kind.schema))
    }

    mutating func optional<Kind: FieldKind>(_ name: StaticString, _ value: inout Kind.Value?, _ kind: Kind.Type) {
        fields.append(FieldDescription(name: name.description, required: false, schema: Kind.schema))
    }
}

extension WireObject {
    /// The object's fields, in the order its list declares them.
    static var fieldDescriptions: [FieldDescription] {
        var lister = FieldLister()
        var value = placeholder
        fields(&lister, &value)
        return lister.fields
    }
}
