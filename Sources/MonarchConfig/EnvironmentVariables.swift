/// `text` with every `${NAME}` replaced by the value of `NAME` in `environment`.
///
/// A `$` not followed by `{` stays as it is. `NAME` is letters, digits and `_`, not starting
/// with a digit.
/// - Throws: at `node`, naming the variable, when one is unset; also for `${` without `}`
///   and for invalid names.
func expandVariables(in text: String, from environment: [String: String], at node: ConfigNode) throws(ConfigError) -> String {
    var result = ""
    var rest = Substring(text)
    while let dollar = rest.firstRange(of: "${") {
        result += rest[..<dollar.lowerBound]
        guard let close = rest[dollar.upperBound...].firstIndex(of: "}") else {
            throw node.error("\"${\" without a closing \"}\" in \"\(text)\"")
        }
        let name = String(rest[dollar.upperBound..<close])
        guard isVariableName(name) else {
            throw node.error("\"${\(name)}\" does not name an environment variable (letters, digits and _)")
        }
        guard let value = environment[name] else {
            throw node.error("the environment variable \(name) is not set (used as ${\(name)})")
        }
        result += value
        rest = rest[rest.index(after: close)...]
    }
    return result + rest
}

/// Whether `name` is `[A-Za-z_][A-Za-z0-9_]*`.
private func isVariableName(_ name: String) -> Bool {
    guard let first = name.unicodeScalars.first, first.isASCII, !("0"..."9").contains(first) else { return false }
    return name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
}
