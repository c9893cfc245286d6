extension Configuration {
    /// Parses `domains`: an ordered mapping of domain name to providers, at least one domain.
    ///
    /// Names and kinds match `[a-z][a-z0-9-]*`; each chain has at least one provider and none
    /// twice; each provider is one of `workerKinds`.
    static func parseDomains(_ node: ConfigNode, workerKinds: [String]) throws(ConfigError) -> [Domain] {
        let table = try node.mapping(
            allowedKeys: nil, expecting: "a mapping of domain name to providers, such as static: [bundle]"
        )
        guard !table.entries.isEmpty else {
            throw node.error("expected at least one domain, such as static: [bundle]")
        }
        var domains: [Domain] = []
        for entry in table.entries {
            let name = try entry.keyNode.name(of: "domain")
            let items = try entry.value.sequence(expecting: "a list of providers such as [cache, network]")
            guard !items.isEmpty else { throw entry.value.error("expected at least one provider, got an empty list") }
            var providers: [String] = []
            for item in items {
                let kind = try item.name(of: "provider")
                guard workerKinds.contains(kind) else {
                    throw item.error(unknownKeyProblem(kind, allowed: Configuration.knownWorkerKinds, noun: "provider kind"))
                }
                guard !providers.contains(kind) else {
                    throw item.error("\"\(kind)\" appears twice in the chain of \(name)")
                }
                providers.append(kind)
            }
            domains.append(Domain(name: name, providers: providers))
        }
        return domains
    }
}
