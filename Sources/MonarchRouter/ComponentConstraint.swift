/// A compiled `where` regex for one parameter, matched against the whole component.
struct ComponentConstraint: @unchecked Sendable {
    // `Regex` is not declared Sendable, but this is safe: the regex is a `let`, built once in
    // `init` and never mutated afterwards. Its only shared mutable state is the lazily lowered
    // matching program, which the standard library publishes with an atomic
    // initialise-once reference, so concurrent matches on one value are safe.

    /// The regex text as written in the configuration.
    let source: String
    private let regex: Regex<AnyRegexOutput>

    /// Compiles `source`; throws the Regex parser's error when it does not compile.
    init(_ source: String) throws {
        self.source = source
        self.regex = try Regex(source)
    }

    /// True when the whole of `component` matches (anchored at both ends).
    func accepts(_ component: String) -> Bool {
        (try? regex.wholeMatch(in: component)) != nil
    }
}
