/// Why a route pattern, a `where` constraint or an upstream template was refused.
public struct RoutePatternError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A human-readable explanation that quotes the pattern or template and names the problem.
    public var message: String

    /// Creates an error with its message.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
