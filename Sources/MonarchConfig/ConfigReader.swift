import Yams

/// A YAML node together with its key path, for walking a document and reporting errors at the
/// right place. Every accessor checks the node's type and throws a ``ConfigError`` that names
/// this node's key path and line.
struct ConfigNode {
    /// The node read.
    let node: Yams.Node
    /// Its key path from the document root (`routes[2].where.id`); empty for the root.
    let keyPath: String
    /// The file name put into errors.
    let fileName: String?

    /// An error at this node.
    func error(_ problem: String) -> ConfigError {
        ConfigError(file: fileName, line: node.mark?.line, keyPath: keyPath, problem: problem)
    }

    /// Whether the node is YAML null: empty, `~` or `null` unquoted.
    var isNull: Bool {
        if case .scalar = node { return node.tag.description == Tag.Name.null.rawValue }
        return false
    }

    /// How the node's type is named in errors: "a mapping", "the string \"x\"", "null".
    var typeDescription: String {
        switch node {
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        case .scalar(let scalar): return isNull ? "nothing" : "\"\(scalar.string)\""
        }
    }

    /// The scalar's text.
    /// - Throws: when the node is null, a mapping or a list.
    func string(expecting expectation: String = "a string") throws(ConfigError) -> String {
        guard case .scalar(let scalar) = node, !isNull else {
            throw error("expected \(expectation), got \(typeDescription)")
        }
        return scalar.string
    }

    /// The scalar's text, which must not be empty.
    func nonEmptyString(expecting expectation: String = "a string") throws(ConfigError) -> String {
        let text = try string(expecting: expectation)
        guard !text.isEmpty else { throw error("expected \(expectation), got an empty string") }
        return text
    }

    /// The items of a list, each with its indexed key path (`listen.clients[1]`).
    /// - Throws: when the node is not a list.
    func sequence(expecting expectation: String = "a list") throws(ConfigError) -> [ConfigNode] {
        guard case .sequence(let items) = node else {
            throw error("expected \(expectation), got \(typeDescription)")
        }
        return items.enumerated().map { index, item in
            ConfigNode(node: item, keyPath: "\(keyPath)[\(index)]", fileName: fileName)
        }
    }

    /// The node as a mapping whose keys must all be among `allowedKeys`.
    ///
    /// Null reads as an empty mapping, so `cache:` with nothing after it means "all defaults".
    /// - Parameter allowedKeys: the keys accepted, in the order error messages list them;
    ///   `nil` accepts any key (the keys are then names, such as domain names).
    /// - Throws: when the node is not a mapping, a key is not a plain string, or a key is not
    ///   allowed (naming the key, the ones expected and the closest one).
    func mapping(
        allowedKeys: [String]?, expecting expectation: String = "a mapping"
    ) throws(ConfigError) -> ConfigMapping {
        if isNull { return ConfigMapping(owner: self, entries: []) }
        guard case .mapping(let pairs) = node else {
            throw error("expected \(expectation), got \(typeDescription)")
        }
        var entries: [ConfigMapping.Entry] = []
        for (keyNode, valueNode) in pairs {
            guard case .scalar(let scalar) = keyNode else {
                let keyAsChild = ConfigNode(node: keyNode, keyPath: keyPath, fileName: fileName)
                throw keyAsChild.error("expected a plain key, got \(keyAsChild.typeDescription)")
            }
            let key = scalar.string
            let childPath = keyPath.isEmpty ? key : "\(keyPath).\(key)"
            if let allowedKeys, !allowedKeys.contains(key) {
                let keyAsChild = ConfigNode(node: keyNode, keyPath: childPath, fileName: fileName)
                throw keyAsChild.error(unknownKeyProblem(key, allowed: allowedKeys))
            }
            entries.append(.init(
                key: key,
                keyNode: ConfigNode(node: keyNode, keyPath: childPath, fileName: fileName),
                value: ConfigNode(node: valueNode, keyPath: childPath, fileName: fileName)
            ))
        }
        return ConfigMapping(owner: self, entries: entries)
    }
}

/// The entries of a mapping node, in document order, with lookups by key.
struct ConfigMapping {
    /// One key and its value.
    struct Entry {
        /// The key's text.
        let key: String
        /// The key node (for errors about the key itself), with the value's key path.
        let keyNode: ConfigNode
        /// The value node.
        let value: ConfigNode
    }

    /// The mapping node itself (for errors about missing keys).
    let owner: ConfigNode
    /// Its entries in document order.
    let entries: [Entry]

    /// The value of `key`, or `nil` when the key is absent or its value is null.
    func optional(_ key: String) -> ConfigNode? {
        guard let value = entries.first(where: { $0.key == key })?.value, !value.isNull else { return nil }
        return value
    }

    /// The value of `key`.
    /// - Throws: naming the key and the mapping's line, when the key is absent or null.
    func required(_ key: String, describing expectation: String) throws(ConfigError) -> ConfigNode {
        guard let value = optional(key) else {
            let path = owner.keyPath.isEmpty ? key : "\(owner.keyPath).\(key)"
            throw ConfigError(
                file: owner.fileName, line: owner.node.mark?.line, keyPath: path,
                problem: "missing; expected \(expectation)"
            )
        }
        return value
    }
}

/// `unknown key "tokn"; expected token (did you mean "token"?)`, with `noun` for "key".
func unknownKeyProblem(_ key: String, allowed: [String], noun: String = "key") -> String {
    var problem = "unknown \(noun) \"\(key)\"; expected \(listing(allowed, conjunction: "or"))"
    let nearest = allowed.map { ($0, editDistance($0, key)) }.min { $0.1 < $1.1 }
    if let (suggestion, distance) = nearest, distance <= max(1, key.count / 3) {
        problem += " (did you mean \"\(suggestion)\"?)"
    }
    return problem
}

/// `a`, `a or b`, `a, b or c`.
func listing(_ words: [String], conjunction: String) -> String {
    guard let last = words.last else { return "nothing" }
    guard words.count > 1 else { return last }
    return words.dropLast().joined(separator: ", ") + " \(conjunction) " + last
}

/// The edit distance between two strings in characters, counting an insertion, a deletion,
/// a substitution or a swap of two neighbours as one edit (optimal string alignment).
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    var distance = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 0...a.count { distance[i][0] = i }
    for j in 0...b.count { distance[0][j] = j }
    for i in stride(from: 1, through: a.count, by: 1) {
        for j in stride(from: 1, through: b.count, by: 1) {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            distance[i][j] = min(distance[i - 1][j] + 1, distance[i][j - 1] + 1, distance[i - 1][j - 1] + cost)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                distance[i][j] = min(distance[i][j], distance[i - 2][j - 2] + 1)
            }
        }
    }
    return distance[a.count][b.count]
}
