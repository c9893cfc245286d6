/// Response headers: each name once, spelt as the upstream first sent it, looked up without
/// regard to case; a repeated header's values are joined with ", " in the order they came.
public struct HTTPHeaders: Sendable, Equatable, Sequence {
    /// The fields, in the order their names first appeared.
    public private(set) var fields: [(name: String, value: String)] = []
    /// Lowercased name → index in `fields`.
    private var index: [String: Int] = [:]

    /// An empty set of headers, with room for `capacity` fields before it grows.
    public init(capacity: Int = 0) {
        fields.reserveCapacity(capacity)
        index.reserveCapacity(capacity)
    }

    /// Headers holding `fields` in order, repeated names joined.
    public init(_ fields: [(name: String, value: String)]) {
        for field in fields { add(field.name, field.value) }
    }

    /// Adds a value for `name`: a new field, or joined to the field of that name with ", ".
    public mutating func add(_ name: String, _ value: String) {
        let key = name.asciiLowercased
        if let position = index[key] {
            fields[position].value += ", " + value
        } else {
            index[key] = fields.count
            fields.append((name, value))
        }
    }

    /// The value of the field named `name` in any case, or nil; setting nil removes the field,
    /// setting a value replaces it (keeping the name's first spelling).
    public subscript(name: String) -> String? {
        get { index[name.asciiLowercased].map { fields[$0].value } }
        set {
            let key = name.asciiLowercased
            if let position = index[key] {
                if let newValue {
                    fields[position].value = newValue
                } else {
                    fields.remove(at: position)
                    index = [:]
                    for (offset, field) in fields.enumerated() { index[field.name.asciiLowercased] = offset }
                }
            } else if let newValue {
                add(name, newValue)
            }
        }
    }

    /// The fields with their names in lowercase, in no particular order.
    var lowercasedFields: some Sequence<(name: String, value: String)> {
        index.lazy.map { (name: $0.key, value: fields[$0.value].value) }
    }

    /// Whether there are no fields.
    public var isEmpty: Bool { fields.isEmpty }

    /// The fields as a dictionary by name as sent (a ``Monarch/Response`` gets them with
    /// lowercase names, from ``HeaderForwarding/responseHeaders(_:bodyLength:)``).
    public var dictionary: [String: String] {
        var result: [String: String] = [:]
        result.reserveCapacity(fields.count)
        for field in fields { result[field.name] = field.value }
        return result
    }

    /// The fields, in order.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// Whether both hold the same fields, spelt the same, in the same order.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}
