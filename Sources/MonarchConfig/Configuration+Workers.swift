extension Configuration {
    /// The settings keys each worker kind accepts besides `count`.
    static let workerSettingKeys: [String: [String]] = [
        "bundle": ["root", "latency"],
        "cache": ["store", "memory"],
        "network": ["allow"],
    ]

    /// Parses `workers`: a mapping of known worker kind to its settings, in file order.
    static func parseWorkers(_ node: ConfigNode, context: ParseContext) throws(ConfigError) -> [WorkerPool] {
        let pools = try node.mapping(allowedKeys: nil, expecting: "a mapping of worker kind to settings")
        var workers: [WorkerPool] = []
        for entry in pools.entries {
            guard let settingKeys = workerSettingKeys[entry.key] else {
                throw entry.keyNode.error(unknownKeyProblem(entry.key, allowed: knownWorkerKinds, noun: "worker kind"))
            }
            let settings = try entry.value.mapping(
                allowedKeys: ["count"] + settingKeys, expecting: "a mapping of \(entry.key) worker settings"
            )
            let count = try settings.optional("count")?.integer(atLeast: 0) ?? 1
            workers.append(WorkerPool(
                kind: entry.key, count: count, settings: try parseSettings(kind: entry.key, settings, context: context)
            ))
        }
        return workers
    }

    /// The kind-specific settings of one pool.
    private static func parseSettings(
        kind: String, _ settings: ConfigMapping, context: ParseContext
    ) throws(ConfigError) -> WorkerSettings {
        switch kind {
        case "bundle":
            let root = try settings.required("root", describing: "the bundle folder, such as Bundle")
                .nonEmptyString(expecting: "a folder path")
            let latency = try settings.optional("latency")?.duration() ?? .zero
            return .bundle(root: resolvePath(root, against: context.baseDirectory), latency: latency)
        case "cache":
            var store: String?
            if let storeNode = settings.optional("store") {
                let text = try storeNode.string(expecting: "a store such as sqlite:PATH")
                guard text.hasPrefix("sqlite:"), text.count > "sqlite:".count else {
                    throw storeNode.error("expected a store such as sqlite:.monarch/cache.db, got \"\(text)\"")
                }
                store = "sqlite:" + resolvePath(String(text.dropFirst("sqlite:".count)), against: context.baseDirectory)
            }
            let memory = try settings.optional("memory")?.byteSize()
            return .cache(store: store, memoryBytes: memory)
        default:
            var allow: [String] = []
            if let allowNode = settings.optional("allow") {
                for item in try allowNode.sequence(expecting: "a list of host:port entries") {
                    let text = try item.string(expecting: "a host:port entry")
                    guard isHostAndPort(text) else {
                        throw item.error("expected host:port such as 127.0.0.1:8080 or [::1]:8080, got \"\(text)\"")
                    }
                    allow.append(text)
                }
            }
            return .network(allow: allow)
        }
    }
}

/// Whether `text` is `HOST:PORT` or `[IPV6]:PORT` with a non-empty host and a port in 0...65535.
func isHostAndPort(_ text: String) -> Bool {
    guard let colon = text.lastIndex(of: ":"), UInt16(text[text.index(after: colon)...]) != nil else { return false }
    var host = text[..<colon]
    if host.hasPrefix("[") {
        guard host.hasSuffix("]") else { return false }
        host = host.dropFirst().dropLast()
    } else if host.contains(":") {
        return false
    }
    return !host.isEmpty && !host.contains(where: { $0 == "/" || $0 == " " })
}
