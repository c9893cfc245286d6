/// Why a request path was refused. Parsing never resolves or repairs a bad path: it refuses it
/// with one of these, whose `message` names the offending part.
public struct PathError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of problem, stable enough to branch on or to put in a wire error code.
    public enum Code: String, Sendable {
        /// The path has no component at all (`""`, `"/"`, `"?x=1"`, `"#f"`, `"http://host"`),
        /// or a component given to `ResourcePath.init(components:)` is empty.
        case empty
        /// A component is `.` or `..` after decoding (also `%2e%2E`); such paths are refused,
        /// never resolved.
        case dotSegment
        /// A `%` not followed by two hexadecimal digits, or escapes that decode to bytes that
        /// are not valid UTF-8.
        case invalidPercentEncoding
        /// A component, query item or fragment contains a NUL character (usually `%00`).
        case nulByte
        /// The text starts like a URL (`scheme://`) but is not a usable http or https URL.
        case invalidURL
        /// A component that fills an upstream URL's path holds a `/` or `\` once decoded
        /// (`%2F`, `%5C`): it would add segments, `..` among them, to the upstream's path.
        case separatorInComponent
        /// The path is over a configured limit (bytes or components).
        case tooLong
    }

    /// The kind of problem.
    public var code: Code
    /// A human-readable explanation that names the offending part of the path.
    public var message: String

    /// Creates an error with a code and a message naming the offending part.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message, prefixed with the code: `dotSegment: component 1 ("%2e%2e") is a dot segment`.
    public var description: String { "\(code.rawValue): \(message)" }
}
