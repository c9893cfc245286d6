/// Which providers a request may reach: a set of named bits. A provider registered with a
/// domain is asked only for requests whose domain that registration contains; ``any`` holds
/// every bit, so a provider registered with it is asked for every request.
///
/// ```swift
/// extension RequestDomain {
///     static let api = RequestDomain(bit: 0)
///     static let assets = RequestDomain(bit: 1)
/// }
/// ```
public struct RequestDomain: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt64

    /// The domain with exactly the bits of `rawValue`.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The domain of one bit, `0 ..< 64`.
    public init(bit: Int) {
        precondition((0..<64).contains(bit), "a request domain has 64 bits; bit \(bit) is out of range")
        self.rawValue = 1 << UInt64(bit)
    }

    /// Every bit: a provider registered with `any` is asked for every request, and a request
    /// in `any` reaches only such providers.
    public static let any = RequestDomain(rawValue: .max)

    public var description: String {
        self == .any ? "any" : "domain(0x\(String(rawValue, radix: 16)))"
    }
}

/// Names for the bits of ``RequestDomain``, as a configuration file writes them.
public struct DomainNames: Sendable, Equatable {
    /// The names, in bit order: `names[0]` is bit 0.
    public let names: [String]

    /// Gives each name one bit, in order.
    ///
    /// - Precondition: at most 64 names, none twice, none `any` (which names every bit).
    public init(_ names: [String]) {
        precondition(names.count <= 64, "at most 64 request domains can be named")
        precondition(Set(names).count == names.count, "a request domain is named twice")
        precondition(!names.contains("any"), "`any` names every domain bit and cannot be redefined")
        self.names = names
    }

    /// The domain called `name` (`any` for every bit), or nil when no bit has that name.
    public func domain(named name: String) -> RequestDomain? {
        if name == "any" { return .any }
        return names.firstIndex(of: name).map { RequestDomain(bit: $0) }
    }

    /// The names of the bits `domain` holds, in bit order (`["any"]` for ``RequestDomain/any``).
    public func names(of domain: RequestDomain) -> [String] {
        if domain == .any { return ["any"] }
        return names.indices.filter { domain.contains(RequestDomain(bit: $0)) }.map { names[$0] }
    }
}
