/// Response headers: each name once, spelt as the upstream first sent it, looked up without
/// regard to case; a repeated header's values are joined with ", " in the order they came.
public struct HTTPHeaders: Sendable, Equatable, Sequence {
    /// The fields, in the order their names first appeared.
    public private(set) var fields: [(name: String, value: String)] = []
    /// The fields' names in lowercase, in the same order.
    private var keys: [String] = []
    /// Lowercased name → index in `fields`, kept once there are more than ``linearLimit``
    /// fields (fewer are found by looking through ``keys``, faster than hashing).
    private var index: [String: Int]?

    /// Fields looked up by a walk through their names rather than by hashing, at most.
    static let linearLimit = 16

    /// An empty set of headers, with room for `capacity` fields before it grows.
    public init(capacity: Int = 0) {
        fields.reserveCapacity(capacity)
        keys.reserveCapacity(capacity)
    }

    /// Headers holding `fields` in order, repeated names joined.
    public init(_ fields: [(name: String, value: String)]) {
        for field in fields { add(field.name, field.value) }
    }

    /// Adds a value for `name`: a new field, or joined to the field of that name with ", ".
    public mutating func add(_ name: String, _ value: String) {
        add(name, lowercased: name.asciiLowercased, value)
    }

    /// Adds a value for `name`, whose lowercase spelling `key` the caller has made already.
    mutating func add(_ name: String, lowercased key: String, _ value: String) {
        if let position = position(of: key) {
            fields[position].value += ", " + value
            return
        }
        if index == nil, keys.count >= Self.linearLimit {
            var made: [String: Int] = [:]
            made.reserveCapacity(keys.count * 2)
            for (offset, key) in keys.enumerated() { made[key] = offset }
            index = made
        }
        index?[key] = fields.count
        keys.append(key)
        fields.append((name, value))
    }

    /// Where the field whose lowercase name is `key` is, or nil.
    private func position(of key: String) -> Int? {
        if let index { return index[key] }
        return keys.firstIndex(of: key)
    }

    /// The value of the field named `name` in any case, or nil; setting nil removes the field,
    /// setting a value replaces it (keeping the name's first spelling).
    public subscript(name: String) -> String? {
        get { position(of: name.asciiLowercased).map { fields[$0].value } }
        set {
            let key = name.asciiLowercased
            if let position = position(of: key) {
                if let newValue {
                    fields[position].value = newValue
                } else {
                    fields.remove(at: position)
                    keys.remove(at: position)
                    if index != nil {
                        var made: [String: Int] = [:]
                        for (offset, key) in keys.enumerated() { made[key] = offset }
                        index = made
                    }
                }
            } else if let newValue {
                add(name, lowercased: key, newValue)
            }
        }
    }

    /// The value of the field whose lowercase name is `key`, or nil.
    func value(lowercased key: String) -> String? {
        position(of: key).map { fields[$0].value }
    }

    /// The fields with their names in lowercase, in order.
    var lowercasedFields: some Sequence<(name: String, value: String)> {
        zip(keys, fields).lazy.map { (name: $0, value: $1.value) }
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
