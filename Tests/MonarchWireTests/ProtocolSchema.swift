import Foundation
@testable import MonarchWire

/// One message type's JSON schema, `Protocols/schemas/<type>.schema.json`, read at test time.
struct ProtocolSchema {
    /// The message type the schema is for.
    var type: String
    /// The schema itself.
    var root: JSONValue

    /// The fields the schema lists at the top level, `type` left out.
    var fieldNames: Set<String> { Set(root["properties"]?.object.map { Array($0.keys) } ?? []).subtracting(["type"]) }

    /// The fields the schema always requires, `type` left out.
    var requiredNames: Set<String> { Set(root["required"]?.strings ?? []).subtracting(["type"]) }

    /// The fields some part of the schema requires only in some messages (`oneOf`, `if`/`then`, …).
    var conditionallyRequiredNames: Set<String> {
        var names: Set<String> = []
        func collect(_ value: JSONValue, top: Bool) {
            switch value {
            case .object(let members):
                for (key, member) in members {
                    if key == "required", !top { names.formUnion(member.strings ?? []) }
                    // Nested objects' own fields (`properties`) are not the message's.
                    if key != "properties" { collect(member, top: false) }
                }
            case .array(let items):
                for item in items { collect(item, top: false) }
            default:
                break
            }
        }
        collect(root, top: true)
        return names.subtracting(requiredNames)
    }

    /// Reads the schema of message type `type`.
    static func load(_ type: String) throws -> ProtocolSchema {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Protocols/schemas/\(type).schema.json")
        return ProtocolSchema(type: type, root: try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: url)))
    }
}

extension JSONValue {
    /// The member `key` of an object; nil for anything else.
    subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The members of an object.
    var object: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The text of a string.
    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The texts of an array of strings, or of a single string.
    var strings: [String]? {
        switch self {
        case .string(let text): return [text]
        case .array(let items): return items.compactMap(\.string)
        default: return nil
        }
    }
}
