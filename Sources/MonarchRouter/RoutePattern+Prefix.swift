extension RoutePattern {
    /// Whether some path whose components start with `components` may match the pattern: used
    /// to find the routes (and so the domains) a path prefix such as `users/` reaches.
    ///
    /// When `lastIsWhole` is false the last of `components` may be only the start of a
    /// component (`users/ad` covers `users/ada`). The answer errs on the side of yes: a
    /// partial component against a `where` constraint is taken to match.
    public func mayMatch(pathsStartingWith components: [String], lastIsWhole: Bool) -> Bool {
        for (position, component) in components.enumerated() {
            guard position < segments.count else { return false }
            let partial = !lastIsWhole && position == components.count - 1
            switch segments[position] {
            case .constant(let constant):
                let matches = partial ? constant.utf8.starts(with: component.utf8) : constant.utf8.elementsEqual(component.utf8)
                guard matches else { return false }
            case .parameter(_, let constraint):
                if !partial, let constraint, !constraint.accepts(component) { return false }
            case .wildcard:
                continue
            case .remainder:
                return true
            }
        }
        return true
    }
}

extension Router {
    /// The targets of every route without host that some path starting with `components` may
    /// match (see ``RoutePattern/mayMatch(pathsStartingWith:lastIsWhole:)``), in precedence
    /// order: the routes a request that names no host may reach (a route with a host keys its
    /// entries apart, under its host: see ``CacheKey``).
    public func targets(forPathsStartingWith components: [String], lastIsWhole: Bool) -> [Target] {
        patterns.filter { $0.host == nil && $0.pattern.mayMatch(pathsStartingWith: components, lastIsWhole: lastIsWhole) }
            .map(\.target)
    }
}
