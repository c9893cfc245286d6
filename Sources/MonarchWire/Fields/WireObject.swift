/// A JSON object of the wire protocol whose fields are listed once, in ``fields(_:_:)``.
///
/// Everything that reads or writes the object goes through that list: the hot codec
/// (``HotMessageCodec``, straight from and to a frame's bytes), the object's `Codable`
/// conformance (the full decoder, which names a defect precisely, and `JSONEncoder`), and the
/// test that holds the list to the protocol's JSON schema (``FieldLister``). Adding a field to
/// such an object is a stored property and one line in its list.
protocol WireObject: Codable, Sendable {
    /// The value decoding starts from: every optional field absent, every required field a
    /// placeholder that decoding overwrites (or fails).
    static var placeholder: Self { get }

    /// Hands each field of `value` to `visitor`, in the order a message writes its fields: the
    /// field's name, its kind (``FieldKind``), whether it is required, and its storage, which
    /// readers set and writers read.
    ///
    /// - Throws: what `visitor` throws; the visit stops there.
    static func fields<Visitor: FieldVisitor>(_ visitor: inout Visitor, _ value: inout Self) throws(Visitor.Failure)
}

/// Something that goes over the fields of a ``WireObject`` in ``WireObject/fields(_:_:)``: a
/// reader (which sets them), a writer (which reads them), a lister.
protocol FieldVisitor {
    /// What stops a visit; `Never` for a visitor that cannot fail.
    associatedtype Failure: Error

    /// Visits a field the object always has.
    mutating func required<Kind: FieldKind>(
        _ name: StaticString, _ value: inout Kind.Value, _ kind: Kind.Type
    ) throws(Failure)

    /// Visits a field the object may lack: absent, or `null` on the wire, is `nil`.
    mutating func optional<Kind: FieldKind>(
        _ name: StaticString, _ value: inout Kind.Value?, _ kind: Kind.Type
    ) throws(Failure)
}
