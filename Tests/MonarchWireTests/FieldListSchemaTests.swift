import Testing
@testable import MonarchWire

/// The field list of each message the hot codec reads and writes (``WireObject``) — the one
/// source of its decoders and encoders — against the message's JSON schema in
/// Protocols/schemas/: the same fields, required alike, null allowed exactly for optional ones,
/// values of the same JSON type and range, nested objects and arrays alike.
@Suite struct FieldListSchemaTests {
    /// Every message with a field list, and its list.
    static let lists: [String: [FieldDescription]] = [
        "request": RequestMessage.fieldDescriptions,
        "response": ResponseMessage.fieldDescriptions,
        "miss": MissMessage.fieldDescriptions,
        "failure": FailureMessage.fieldDescriptions,
        "cancel": CancelMessage.fieldDescriptions,
        "ping": PingMessage.fieldDescriptions,
        "pong": PongMessage.fieldDescriptions,
        "store": StoreMessage.fieldDescriptions,
    ]

    @Test("Each field list says what its message's schema says", arguments: lists.keys.sorted())
    func listMatchesSchema(type: String) throws {
        let schema = try ProtocolSchema.load(type)
        #expect(schema.root["properties"]?["type"]?["const"] == .string(type))
        let problems = SchemaComparison.mismatches(try #require(Self.lists[type]), schema.root, at: type, envelope: true)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("The hot codec writes exactly the messages that have a field list")
    func hotMessagesHaveLists() {
        let written = WireMessage.knownTypes.filter { type in
            var bytes: [UInt8] = []
            return Self.placeholders[type].map { HotMessageCodec.encode($0, into: &bytes) } ?? false
        }
        #expect(written == Set(Self.lists.keys))
        #expect(Set(Self.placeholders.keys) == Set(Self.lists.keys))
    }

    /// A message of each type with a field list.
    static let placeholders: [String: WireMessage] = [
        "request": .request(.placeholder), "response": .response(.placeholder), "miss": .miss(.placeholder),
        "failure": .failure(.placeholder), "cancel": .cancel(.placeholder), "ping": .ping(.placeholder),
        "pong": .pong(.placeholder), "store": .store(.placeholder),
    ]

    @Test("The comparison sees a field missing on either side, required differently, of another type or range, or nested differently")
    func comparisonSeesDifferences() throws {
        let schema = try ProtocolSchema.load("failure").root
        let list = FailureMessage.fieldDescriptions
        #expect(SchemaComparison.mismatches(list, schema, at: "failure", envelope: true).isEmpty)

        func problems(_ change: (inout [FieldDescription]) -> Void) -> [String] {
            var changed = list
            change(&changed)
            return SchemaComparison.mismatches(changed, schema, at: "failure", envelope: true)
        }
        #expect(!problems { $0.removeLast() }.isEmpty, "a field the schema has and the list lacks")
        #expect(!problems { $0.append(FieldDescription(name: "extra", required: false, schema: .string)) }.isEmpty)
        #expect(!problems { $0[0].required = false }.isEmpty, "required in the schema, optional in the list")
        #expect(!problems { $0[0].schema = .integer(minimum: 0, maximum: nil) }.isEmpty, "another maximum")
        #expect(!problems { $0[0].schema = .string }.isEmpty, "another type")
        #expect(!problems { list in
            guard case .object(var detail) = list[1].schema else { return }
            detail[0].required = false
            list[1].schema = .object(detail)
        }.isEmpty, "a nested field required differently")
        #expect(!problems { list in
            guard case .object(var detail) = list[1].schema, case .list(.object(var attempt)) = detail[2].schema else { return }
            attempt[1].schema = .choice(["miss", "failure"])
            detail[2].schema = .list(.object(attempt))
            list[1].schema = .object(detail)
        }.isEmpty, "an enum inside an array with other values")
    }
}

/// Compares a ``WireObject``'s field list with a JSON schema of an object.
enum SchemaComparison {
    /// What differs between `fields` and the object schema `schema`, one sentence each, each
    /// naming the field at `path`; `envelope`: the object is a message, whose `type` is no field
    /// of its list.
    static func mismatches(_ fields: [FieldDescription], _ schema: JSONValue, at path: String, envelope: Bool) -> [String] {
        guard let properties = schema["properties"]?.object else { return ["\(path): the schema lists no properties"] }
        var names = Set(properties.keys)
        var required = Set(schema["required"]?.strings ?? [])
        if envelope {
            names.remove("type")
            required.remove("type")
        }
        let listed = Set(fields.map(\.name))
        var problems: [String] = []
        for name in names.subtracting(listed).sorted() { problems.append("\(path).\(name): in the schema, not in the field list") }
        for name in listed.subtracting(names).sorted() { problems.append("\(path).\(name): in the field list, not in the schema") }
        for field in fields {
            guard let property = properties[field.name] else { continue }
            let fieldPath = "\(path).\(field.name)"
            if field.required != required.contains(field.name) {
                problems.append("\(fieldPath): \(field.required ? "required" : "optional") in the field list, not in the schema")
            }
            problems += valueMismatches(field.schema, property, at: fieldPath, nullable: !field.required)
        }
        return problems
    }

    /// What differs between a value of kind `kind` and the schema `property`; `nullable`:
    /// whether `null` is allowed (and means absent).
    static func valueMismatches(_ kind: FieldSchema, _ property: JSONValue, at path: String, nullable: Bool) -> [String] {
        var problems: [String] = []
        let types: Set<String>
        if case .array(let values)? = property["enum"] {
            types = Set(values.map { $0 == .null ? "null" : "string" })
        } else {
            types = Set(property["type"]?.strings ?? [])
        }
        if types.contains("null") != nullable {
            problems.append("\(path): null is \(nullable ? "allowed" : "refused") by the field list, not by the schema")
        }
        let expected = switch kind {
        case .string, .pattern, .base64, .choice: "string"
        case .integer: "integer"
        case .boolean: "boolean"
        case .stringMap, .object: "object"
        case .list: "array"
        }
        if types.subtracting(["null"]) != [expected] {
            problems.append("\(path): \(expected) in the field list, \(types.subtracting(["null"]).sorted()) in the schema")
        }
        switch kind {
        case .string, .boolean:
            break
        case .pattern(let pattern):
            if property["pattern"]?.string != pattern { problems.append("\(path): pattern \(pattern) in the field list, not in the schema") }
        case .base64:
            if property["contentEncoding"]?.string != "base64" { problems.append("\(path): base64 in the field list, not in the schema") }
        case .integer(let minimum, let maximum):
            if property["minimum"] != .integer(Int64(minimum)) { problems.append("\(path): minimum \(minimum) in the field list, not in the schema") }
            if property["maximum"] != maximum.map({ .integer(Int64($0)) }) {
                problems.append("\(path): maximum \(maximum.map(String.init) ?? "none") in the field list, not in the schema")
            }
        case .stringMap:
            if property["additionalProperties"]?["type"]?.string != "string" {
                problems.append("\(path): an object of strings in the field list, not in the schema")
            }
        case .choice(let values):
            let listed = Set(property["enum"]?.strings ?? [])
            if listed != Set(values) { problems.append("\(path): \(values.sorted()) in the field list, \(listed.sorted()) in the schema") }
        case .object(let fields):
            problems += mismatches(fields, property, at: path, envelope: false)
        case .list(let item):
            if let items = property["items"] {
                problems += valueMismatches(item, items, at: path + "[]", nullable: false)
            } else {
                problems.append("\(path): the schema says nothing of the array's items")
            }
        }
        return problems
    }
}
