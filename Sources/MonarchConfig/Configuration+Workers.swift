extension Configuration {
    /// The settings keys each worker kind accepts besides `count` and `logLevel`.
    static let workerSettingKeys: [String: [String]] = [
        "bundle": ["root", "latency", "maxFile", "dotfiles"],
        "cache": ["store", "memory", "keepStale", "password", "storeTimeout", "storeMaxPending", "memoryGrace"],
        "network": [
            "allow", "retries", "connectTimeout", "timeout", "maxRedirects", "maxResponse", "maxHostConnections",
            "capacity",
        ],
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
                allowedKeys: ["count"] + settingKeys + ["logLevel"], expecting: "a mapping of \(entry.key) worker settings"
            )
            let count = try settings.optional("count")?.integer(atLeast: 0) ?? 1
            let logLevel = try settings.optional("logLevel")?.logLevel()
            workers.append(WorkerPool(
                kind: entry.key, count: count, settings: try parseSettings(kind: entry.key, settings, context: context),
                logLevel: logLevel
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
            return .bundle(WorkerSettings.Bundle(
                root: resolvePath(root, against: context.baseDirectory),
                latency: try settings.optional("latency")?.duration() ?? .zero,
                maxFileBytes: try settings.optional("maxFile")?.byteSize(),
                serveDotfiles: try settings.optional("dotfiles")?.bool() ?? false))
        case "cache":
            var store: String?
            if let storeNode = settings.optional("store") {
                let text = try storeNode.string(expecting: "a store such as sqlite:PATH or redis://HOST:PORT/DB")
                if text.hasPrefix("redis://") || text.hasPrefix("rediss://") {
                    if let problem = redisAddressProblem(text) { throw storeNode.error(problem) }
                    store = text
                } else {
                    guard text.hasPrefix("sqlite:"), text.count > "sqlite:".count else {
                        throw storeNode.error(
                            "expected a store such as sqlite:.monarch/cache.db or redis://127.0.0.1:6379/0, got \"\(text)\"")
                    }
                    store = "sqlite:" + resolvePath(String(text.dropFirst("sqlite:".count)), against: context.baseDirectory)
                }
            }
            let isRedis = store?.hasPrefix("redis://") == true
            var password: String?
            if let passwordNode = settings.optional("password") {
                guard isRedis else { throw passwordNode.error("password is for a Redis store (store: redis://HOST:PORT/DB)") }
                let text = try passwordNode.string(expecting: "a password, such as ${REDIS_PASSWORD}")
                password = try expandVariables(in: text, from: context.environment, at: passwordNode)
            }
            for key in ["storeTimeout", "memoryGrace"] {
                if let node = settings.optional(key), !isRedis {
                    throw node.error("\(key) is for a Redis store (store: redis://HOST:PORT/DB)")
                }
            }
            return .cache(WorkerSettings.Cache(
                store: store, memoryBytes: try settings.optional("memory")?.byteSize(),
                keepStale: try settings.optional("keepStale")?.duration(inWhole: .seconds(1), unitName: "seconds"),
                password: password, storeTimeout: try settings.optional("storeTimeout")?.positiveMilliseconds(),
                storeMaxPending: try settings.optional("storeMaxPending")?.integer(atLeast: 1),
                memoryGrace: try settings.optional("memoryGrace")?.duration(inWhole: .milliseconds(1), unitName: "milliseconds")))
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
            return .network(WorkerSettings.Network(
                allow: allow,
                retries: try settings.optional("retries")?.integer(atLeast: 0),
                connectTimeout: try settings.optional("connectTimeout")?.positiveMilliseconds(),
                timeout: try settings.optional("timeout")?.positiveMilliseconds(),
                maxRedirects: try settings.optional("maxRedirects")?.integer(atLeast: 0),
                maxResponseBytes: try settings.optional("maxResponse")?.positiveByteSize(),
                maxHostConnections: try settings.optional("maxHostConnections")?.integer(atLeast: 1),
                capacity: try settings.optional("capacity")?.integer(atLeast: 1)))
        }
    }
}

/// What is wrong with a Redis store's address, or nil when it is `redis://HOST[:PORT][/DB]`.
/// (The cache worker parses it again, with the same rules.)
func redisAddressProblem(_ text: String) -> String? {
    if text.hasPrefix("rediss://") {
        return "rediss:// (TLS) is not supported: the hiredis Monarch builds on (Debian's libhiredis 0.14) has no TLS; "
            + "reach Redis over a private network or a TLS tunnel, as redis://"
    }
    var rest = Substring(text.dropFirst("redis://".count))
    if rest.contains("@") {
        return "no password in the address (it would show in ps): give it as password: ${VARIABLE}"
    }
    if let slash = rest.firstIndex(of: "/") {
        let database = rest[rest.index(after: slash)...]
        if !database.isEmpty && (Int(database) ?? -1) < 0 {
            return "expected a database number after the address, such as redis://127.0.0.1:6379/0, got \"\(text)\""
        }
        rest = rest[..<slash]
    }
    let hostAndPort = rest.contains(":") && !(rest.hasPrefix("[") && rest.hasSuffix("]")) ? String(rest) : String(rest) + ":6379"
    guard isHostAndPort(hostAndPort), let port = Int(hostAndPort[hostAndPort.index(after: hostAndPort.lastIndex(of: ":")!)...]),
        port >= 1
    else {
        return "expected redis://HOST:PORT/DB such as redis://127.0.0.1:6379/0, got \"\(text)\""
    }
    return nil
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
