/// A configuration that cannot be used: where it went wrong and what is wrong.
///
/// Every error the configuration reader throws names the key path of the offending value
/// (`workers.bundle.count`, `routes[2].where.id`, `listen.clients[1]`; sequence indexes count
/// from 0) and, when the value comes from YAML text, its 1-based line. Its ``description``
/// reads like a compiler diagnostic:
///
///     monarch.yml:14: routes[2].ttl: expected a duration such as 500ms, 5s or 2m, got "soon"
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file the text came from, as it was named to ``Configuration/load(file:environment:)``
    /// or ``Configuration/parse(yaml:baseDirectory:fileName:environment:)``; `nil` when unnamed.
    public var file: String?
    /// The 1-based line of the offending node, when known.
    public var line: Int?
    /// The key path of the offending value; empty when the problem is the document as a whole
    /// (unreadable file, YAML syntax).
    public var keyPath: String
    /// What is wrong, in words meant for the person editing the file.
    public var problem: String

    /// Creates an error; every field is kept as given.
    public init(file: String? = nil, line: Int? = nil, keyPath: String, problem: String) {
        self.file = file
        self.line = line
        self.keyPath = keyPath
        self.problem = problem
    }

    /// `FILE:LINE: KEYPATH: PROBLEM`, leaving out the parts that are unknown (`line 3:` stands
    /// in for the location when the file has no name).
    public var description: String {
        var text = ""
        switch (file, line) {
        case let (file?, line?): text += "\(file):\(line): "
        case let (file?, nil): text += "\(file): "
        case let (nil, line?): text += "line \(line): "
        case (nil, nil): break
        }
        if !keyPath.isEmpty { text += "\(keyPath): " }
        return text + problem
    }
}
