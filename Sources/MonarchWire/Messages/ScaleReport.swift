#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a `scale` did, as its `result`'s `data` (Protocols/README.md, `scale`).
public struct ScaleReport: Codable, Sendable, Equatable {
    /// The worker kind scaled.
    public var kind: String
    /// The local workers wanted now.
    public var count: Int
    /// The local workers wanted before.
    public var previous: Int
    /// Names of the workers started (all registered when the result is sent).
    public var started: [String]
    /// Names of the workers drained and stopped (all exited when the result is sent).
    public var stopped: [String]
    /// Workers of the kind that dialled in from elsewhere: not the coordinator's to start or stop.
    public var remote: Int
    /// What this caller asked for, when a later scale replaced it before the pool got there
    /// (then ``count`` is the size the pool reached, the later one); nil otherwise.
    public var requested: Int?
    /// True when a later scale replaced what this caller asked for before the pool got there:
    /// the pool went on to the later size, which ``count`` reports. Nil otherwise.
    public var superseded: Bool?

    /// Creates a report.
    public init(kind: String, count: Int, previous: Int, started: [String] = [], stopped: [String] = [], remote: Int = 0) {
        self.kind = kind
        self.count = count
        self.previous = previous
        self.started = started
        self.stopped = stopped
        self.remote = remote
    }
}

extension ResultMessage {
    /// A result whose `data` is `report`, encoded as its JSON object.
    public init(id: MessageID, report: some Encodable) {
        let value = try? JSONDecoder().decode([String: JSONValue].self, from: JSONEncoder().encode(report))
        self.init(id: id, data: value)
    }

    /// The `data` read as a `T`.
    ///
    /// - Throws: `DecodingError` when it is not one (a field missing or of another type).
    public func report<T: Decodable>(as type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: JSONEncoder().encode(data ?? [:]))
    }
}
