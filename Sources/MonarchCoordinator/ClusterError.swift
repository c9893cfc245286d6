/// Why a local cluster could not start, or stopped abnormally.
public struct ClusterError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, for a person.
    public var message: String

    /// Creates a cluster error.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
