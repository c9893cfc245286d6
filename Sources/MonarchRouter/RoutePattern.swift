/// A route pattern such as `users/:id`, `assets/...` or `:_/thumbs/:size`, matched against the
/// decoded components of a `ResourcePath`.
///
/// Components are separated by "/"; a leading (and a trailing) "/" is ignored, an empty
/// component in between is an error.
/// - A constant component matches a path component with exactly the same UTF-8 bytes: case
///   sensitive, no Unicode normalisation, no percent-decoding of the pattern text (the path
///   component is already decoded, so the constant `a b` matches the request `a%20b`).
/// - `:name` (name: `[A-Za-z_][A-Za-z0-9_]*`, but not `_`) matches any one component and binds
///   it to `name`. With a `where` regex the whole component must match it (anchored: `[0-9]+`
///   refuses `12a`).
/// - `:_` matches any one component without binding it.
/// - `...` matches one or more remaining components, which the match returns as `remainder`;
///   it may only be the last component.
public struct RoutePattern: Sendable, CustomStringConvertible {
    /// The kind of one pattern component, in precedence order: a smaller kind wins.
    enum Kind: Int, Comparable {
        case constant, parameter, wildcard, remainder

        static func < (lhs: Kind, rhs: Kind) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// One component of a pattern.
    enum Segment: Sendable {
        case constant(String)
        case parameter(String, ComponentConstraint?)
        case wildcard
        case remainder

        var kind: Kind {
            switch self {
            case .constant: return .constant
            case .parameter: return .parameter
            case .wildcard: return .wildcard
            case .remainder: return .remainder
            }
        }
    }

    let segments: [Segment]
    /// The kind of each component, left to right: what `Router` orders routes by.
    let kinds: [Kind]

    /// The names of the binding parameters, in order of appearance; `:_` is not among them.
    public let parameterNames: [String]
    /// True when the pattern ends with `...` and so matches one or more further components.
    public let hasRemainder: Bool
    /// The pattern in normal form: its components joined by "/", without leading "/".
    public let description: String

    /// Parses `text` and compiles the `where` constraints, each a regex (Swift `Regex` syntax)
    /// that the whole of its parameter's component must match.
    ///
    /// Throws a `RoutePatternError` for: an empty pattern, an empty component (`a//b`), `...`
    /// that is not last, an invalid parameter name (`:`, `:1x`, `:a-b`), a duplicate parameter
    /// name, a constant `.` or `..` (no path can have one), a `where` key that names no
    /// parameter of the pattern, and a `where` regex that does not compile.
    public init(_ text: String, where constraints: [String: String] = [:]) throws(RoutePatternError) {
        var body = Substring(text)
        if body.hasPrefix("/") { body = body.dropFirst() }
        if body.hasSuffix("/") { body = body.dropLast() }
        guard !body.isEmpty else {
            throw RoutePatternError("route pattern \(text.debugDescription) is empty")
        }
        let pieces = body.split(separator: "/", omittingEmptySubsequences: false)
        var segments: [Segment] = []
        var names: [String] = []
        for (position, piece) in pieces.enumerated() {
            func failure(_ problem: String) -> RoutePatternError {
                RoutePatternError("route pattern \(text.debugDescription): component \(position + 1) \(problem)")
            }
            if piece.isEmpty {
                throw failure("is empty")
            } else if piece == "..." {
                guard position == pieces.count - 1 else { throw failure("\"...\" must be the last component") }
                segments.append(.remainder)
            } else if piece == ":_" {
                segments.append(.wildcard)
            } else if piece.hasPrefix(":") {
                let name = String(piece.dropFirst())
                guard Self.isValidParameterName(name) else {
                    throw failure("has an invalid parameter name \(name.debugDescription) (use [A-Za-z_][A-Za-z0-9_]*)")
                }
                guard !names.contains(name) else { throw failure("repeats the parameter name \(name.debugDescription)") }
                names.append(name)
                var constraint: ComponentConstraint?
                if let source = constraints[name] {
                    do {
                        constraint = try ComponentConstraint(source)
                    } catch {
                        throw RoutePatternError(
                            "route pattern \(text.debugDescription): the where regex \(source.debugDescription) for \(name.debugDescription) does not compile: \(error)"
                        )
                    }
                }
                segments.append(.parameter(name, constraint))
            } else if piece == "." || piece == ".." {
                throw failure("is a dot segment, which no request path can have")
            } else {
                segments.append(.constant(String(piece)))
            }
        }
        for key in constraints.keys.sorted() where !names.contains(key) {
            throw RoutePatternError(
                "route pattern \(text.debugDescription): where names \(key.debugDescription), which is not a parameter of the pattern"
            )
        }
        self.segments = segments
        self.kinds = segments.map(\.kind)
        self.parameterNames = names
        self.hasRemainder = segments.last?.kind == .remainder
        self.description = String(body)
    }

    /// Matches the decoded components of `path`; the query and fragment play no part (a query
    /// item never sets a parameter). Returns the bound parameters and, for a pattern ending in
    /// `...`, the one or more components it covered (empty otherwise), or nil when the path
    /// does not match: a different number of components (fewer than the pattern's, or more
    /// without `...`), a different constant, or a component refused by its `where` regex.
    public func match(_ path: ResourcePath) -> (parameters: [String: String], remainder: [String])? {
        let components = path.components
        if hasRemainder {
            guard components.count >= segments.count else { return nil }
        } else {
            guard components.count == segments.count else { return nil }
        }
        var parameters: [String: String] = [:]
        for (segment, component) in zip(segments, components) {
            switch segment {
            case .constant(let constant):
                guard constant.utf8.elementsEqual(component.utf8) else { return nil }
            case .parameter(let name, let constraint):
                if let constraint, !constraint.accepts(component) { return nil }
                parameters[name] = component
            case .wildcard:
                continue
            case .remainder:
                return (parameters, Array(components[(segments.count - 1)...]))
            }
        }
        return (parameters, [])
    }

    /// The regex text of the `where` constraint on each constrained parameter.
    public var constraints: [String: String] {
        var result: [String: String] = [:]
        for case .parameter(let name, let constraint?) in segments { result[name] = constraint.source }
        return result
    }

    /// True for `[A-Za-z_][A-Za-z0-9_]*` other than `_`.
    static func isValidParameterName(_ name: String) -> Bool {
        guard name != "_", let first = name.utf8.first else { return false }
        func isLetter(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || byte == UInt8(ascii: "_")
        }
        return isLetter(first) && name.utf8.allSatisfy { isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
