/// Which providers a request may reach: a set of domain names, the same names a cluster's
/// configuration gives its `domains:` table. A provider registered with a domain is asked
/// only for requests whose domain that registration contains; ``any`` contains every name,
/// so a provider registered with it is asked for every request.
///
/// One meaning everywhere: in one process the names select Swift providers; sent to a
/// coordinator, a request's one name selects the chain of that name (``any``: the route's).
///
/// ```swift
/// extension RequestDomain {
///     static let api: RequestDomain = "api"
///     static let assets: RequestDomain = "assets"
/// }
/// monarch.register(apiProvider, for: .api)
/// monarch.register(fallback, for: [.api, .assets])
/// ```
public struct RequestDomain: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral,
    ExpressibleByArrayLiteral
{
    /// The names; nil for ``any``, which holds every name.
    public let names: Set<String>?

    /// The domain called `name`.
    public init(_ name: String) { names = [name] }

    /// The domain called `value`.
    public init(stringLiteral value: String) { self.init(value) }

    /// The union of `domains` (``any`` if one of them is).
    public init(arrayLiteral domains: RequestDomain...) { self.init(union: domains) }

    /// The union of `domains` (``any`` if one of them is).
    public init(union domains: [RequestDomain]) {
        var names: Set<String> = []
        for domain in domains {
            guard let more = domain.names else {
                self.names = nil
                return
            }
            names.formUnion(more)
        }
        self.names = names
    }

    private init(anyName: ()) { names = nil }

    /// Every name: a provider registered with `any` is asked for every request, and a request
    /// in `any` reaches only such providers (in a cluster: the route decides the domain).
    public static let any = RequestDomain(anyName: ())

    /// Whether every name of `other` is one of this domain's (``any`` contains everything; only
    /// ``any`` contains ``any``).
    public func contains(_ other: RequestDomain) -> Bool {
        guard let names else { return true }
        guard let otherNames = other.names else { return false }
        return otherNames.isSubset(of: names)
    }

    /// The one name a request of this domain sends to a coordinator: nil for ``any`` (the
    /// route's domain); the name when there is one.
    ///
    /// - Throws: ``MonarchError/chainFailure(_:)`` with code `invalidRequest` for a union of
    ///   several names, which a coordinator cannot serve (a cluster request has one chain).
    public func wireName() throws(MonarchError) -> String? {
        guard let names else { return nil }
        guard names.count == 1, let name = names.first else {
            throw .chainFailure(ChainError(
                .invalidRequest, "a request to a coordinator names one domain, not \(self)"))
        }
        return name
    }

    /// The domain a wire message names: ``any`` when it names none.
    public init(wireName: String?) {
        self = wireName.map { RequestDomain($0) } ?? .any
    }

    public var description: String {
        guard let names else { return "any" }
        return names.count == 1 ? names.first! : "[" + names.sorted().joined(separator: ", ") + "]"
    }
}
