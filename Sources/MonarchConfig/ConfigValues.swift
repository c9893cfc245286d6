import MonarchWire

/// Typed readers for scalar values, each failing with the key path and line of the node.
extension ConfigNode {
    /// A duration such as `500ms`, `5s` or `2m` (see ``parseDuration(_:)``).
    /// - Throws: when the text is not a duration; a bare number is told to add a unit.
    func duration() throws(ConfigError) -> Duration {
        let expectation = "a duration such as 500ms, 5s or 2m"
        let text = try string(expecting: expectation)
        if let duration = parseDuration(text) { return duration }
        if !text.isEmpty, text.allSatisfy({ $0.isASCIIDigit || $0 == "." }) {
            throw error("expected \(expectation), got \"\(text)\": add a unit (\(text)ms, \(text)s, \(text)m or \(text)h)")
        }
        throw error("expected \(expectation), got \"\(text)\"")
    }

    /// A duration greater than zero.
    func positiveDuration() throws(ConfigError) -> Duration {
        let duration = try duration()
        guard duration > .zero else { throw error("must be longer than zero") }
        return duration
    }

    /// A duration that is a whole number of `unit` (a worker flag counts in it), such as
    /// whole seconds for `keepStale`.
    /// - Throws: when the text is not a duration, or has a fraction of `unit`.
    /// - Parameter unit: one second, or a fraction of a second that divides it (`.milliseconds(1)`).
    func duration(inWhole unit: Duration, unitName: String) throws(ConfigError) -> Duration {
        let value = try duration()
        let attoseconds = value.components.attoseconds
        let unitAttoseconds = unit.components.seconds >= 1 ? 1_000_000_000_000_000_000 : unit.components.attoseconds
        guard attoseconds % unitAttoseconds == 0 else {
            throw error("must be a whole number of \(unitName), got \"\(try string())\"")
        }
        return value
    }

    /// A duration of at least one millisecond, in whole milliseconds (worker flags count in them).
    func positiveMilliseconds() throws(ConfigError) -> Duration {
        let value = try duration(inWhole: .milliseconds(1), unitName: "milliseconds")
        guard value > .zero else { throw error("must be longer than zero") }
        return value
    }

    /// `true` or `false` (YAML's spellings of them: `true`, `True`, `TRUE`, likewise `false`).
    func bool() throws(ConfigError) -> Bool {
        let text = try string(expecting: "true or false")
        switch text {
        case "true", "True", "TRUE": return true
        case "false", "False", "FALSE": return false
        default: throw error("expected true or false, got \"\(text)\"")
        }
    }

    /// One of ``Configuration/logLevels``.
    func logLevel() throws(ConfigError) -> String {
        let text = try string(expecting: "a log level")
        guard Configuration.logLevels.contains(text) else {
            throw error(unknownKeyProblem(text, allowed: Configuration.logLevels, noun: "log level"))
        }
        return text
    }

    /// A byte size such as `4096`, `512KB` or `64MB` (see ``parseByteSize(_:)``).
    func byteSize() throws(ConfigError) -> Int {
        let expectation = "a byte size such as 4096, 512KB, 64MB or 1GB"
        let text = try string(expecting: expectation)
        guard let bytes = parseByteSize(text) else { throw error("expected \(expectation), got \"\(text)\"") }
        return bytes
    }

    /// A byte size of at least one byte.
    func positiveByteSize() throws(ConfigError) -> Int {
        let bytes = try byteSize()
        guard bytes > 0 else { throw error("must be at least 1 byte") }
        return bytes
    }

    /// A whole number of at least `minimum`.
    func integer(atLeast minimum: Int) throws(ConfigError) -> Int {
        let expectation = "a whole number of at least \(minimum)"
        let text = try string(expecting: expectation)
        guard let value = Int(text), value >= minimum else { throw error("expected \(expectation), got \"\(text)\"") }
        return value
    }

    /// A name as used for domains and worker kinds: `[a-z][a-z0-9-]*`.
    func name(of what: String) throws(ConfigError) -> String {
        let text = try string(expecting: "\(what) name")
        guard isName(text) else {
            throw error("\"\(text)\" is not a valid \(what) name: use lowercase letters, digits and -, starting with a letter")
        }
        return text
    }

    /// A `unix:PATH` or `tcp:HOST:PORT` address; a relative Unix path is resolved against
    /// `baseDirectory`.
    func address(baseDirectory: String) throws(ConfigError) -> SocketAddress {
        let text = try string(expecting: "an address such as unix:PATH or tcp:HOST:PORT")
        let address: SocketAddress
        do throws(SocketAddressError) {
            address = try SocketAddress(parsing: text)
        } catch {
            throw self.error(error.description)
        }
        guard case .unix(let path) = address, !path.hasPrefix("/") else { return address }
        let resolved = resolvePath(path, against: baseDirectory)
        do throws(SocketAddressError) {
            return try SocketAddress(parsing: "unix:\(resolved)")
        } catch {
            throw self.error("\(error.description) (\"\(path)\" resolved against \(baseDirectory))")
        }
    }
}

/// Whether `text` matches `[a-z][a-z0-9-]*`.
func isName(_ text: String) -> Bool {
    guard let first = text.unicodeScalars.first, ("a"..."z").contains(first) else { return false }
    return text.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
}

/// `path` made absolute against `base` (itself made absolute against `workingDirectory`
/// when relative), with `.` and `..` segments and repeated slashes removed lexically (symbolic
/// links are not followed; `..` at the root stays at the root).
func resolvePath(_ path: String, against base: String, workingDirectory: String = currentDirectory()) -> String {
    var full = path
    if !full.hasPrefix("/") {
        let absoluteBase = base.hasPrefix("/") ? base : workingDirectory + "/" + base
        full = absoluteBase + "/" + path
    }
    var segments: [Substring] = []
    for segment in full.split(separator: "/") {
        switch segment {
        case ".": continue
        case "..": _ = segments.popLast()
        default: segments.append(segment)
        }
    }
    return "/" + segments.joined(separator: "/")
}
