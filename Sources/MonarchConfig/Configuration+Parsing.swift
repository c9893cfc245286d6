import Foundation
import MonarchWire
import Yams

/// What parsing needs besides the text.
struct ParseContext {
    /// The absolute directory relative paths are resolved against.
    var baseDirectory: String
    /// The file name put into errors.
    var fileName: String?
    /// Where `${VAR}` in `auth.token` is looked up.
    var environment: [String: String]
}

extension Configuration {
    /// The top-level keys of a configuration file, in the order errors list them.
    public static let topLevelKeys = ["listen", "auth", "domains", "routes", "workers", "metrics", "http", "limits"]

    /// Reads and parses the configuration file at `path`.
    ///
    /// Relative paths inside the file are resolved against the file's own directory (made
    /// absolute against the working directory), and errors name the file as `path` was given.
    /// - Parameter environment: where `${VAR}` in `auth` is looked up.
    /// - Throws: ``ConfigError`` when the file cannot be read or breaks any rule of
    ///   ``parse(yaml:baseDirectory:fileName:environment:)``.
    public static func load(
        file path: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigError) -> Configuration {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ConfigError(file: path, keyPath: "", problem: "no such file")
        }
        guard !isDirectory.boolValue else { throw ConfigError(file: path, keyPath: "", problem: "is a directory, not a file") }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError(file: path, keyPath: "", problem: "cannot read the file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigError(file: path, keyPath: "", problem: "the file is not UTF-8 text")
        }
        let directory = (path as NSString).deletingLastPathComponent
        return try parse(
            yaml: text, baseDirectory: directory.isEmpty ? "." : directory, fileName: path, environment: environment
        )
    }

    /// Parses and validates configuration YAML.
    ///
    /// The rules, each broken one reported as a ``ConfigError`` with key path and line:
    /// - The document is a mapping with the keys ``topLevelKeys``; `listen` and `domains` are
    ///   required. Unknown keys at any level are errors that list the expected keys, and a value
    ///   of the wrong shape says what was expected ("expected a list, got a mapping").
    /// - `listen.clients` is one address or a list of at least one; `listen.workers` is one
    ///   address; all are distinct. Addresses are `unix:PATH` or `tcp:HOST:PORT`; relative Unix
    ///   paths are resolved against `baseDirectory`.
    /// - `auth` holds a secret per role — `token` (clients), `adminToken`, `workerToken`,
    ///   `metricsToken` — each may use `${VAR}`, expanded from `environment` (an unset variable
    ///   is an error); none is empty, no two are the same. A client listener that is not local
    ///   (see ``isLocal(_:)``) requires `token`; a worker listener that is not local requires
    ///   `workerToken`.
    /// - `domains` is an ordered mapping of domain name to a list of at least one provider kind,
    ///   none twice; names and kinds match `[a-z][a-z0-9-]*`, and each kind is a configured
    ///   worker kind or one of ``knownWorkerKinds``.
    /// - `routes` is a list; each route needs `match` and a `domain` from `domains`, and may
    ///   have `host` (a ``HostPattern``), `where` (parameter → regular expression that
    ///   compiles), `upstream`, `ttl` and `timeout` (durations above zero), `policy` (a
    ///   ``CachePolicy`` name), `public`, `headers` and `httpBody` (a byte size whose body fits
    ///   a frame of `limits.maxFrame`).
    /// - `workers` maps a kind from ``knownWorkerKinds`` to its settings: `count` (a whole
    ///   number ≥ 0, default 1), `logLevel` (one of ``logLevels``) and, for `bundle`, `root`
    ///   (required, resolved), `latency` (duration, default 0), `maxFile` (byte size) and
    ///   `dotfiles` (true or false); for `cache`, `store` (`sqlite:PATH`, resolved), `memory`
    ///   (byte size) and `keepStale` (a duration in whole seconds); for `network`, `allow` (a
    ///   list of `host:port`), `retries` and `maxRedirects` (≥ 0), `connectTimeout` and
    ///   `timeout` (durations in whole milliseconds, above zero), `maxResponse` (byte size ≥ 1),
    ///   `maxHostConnections` and `capacity` (≥ 1). See ``WorkerSettings``.
    /// - `metrics` is a `tcp:HOST:PORT` address for the Prometheus endpoint; one other machines
    ///   can reach requires `auth.metricsToken` or `auth.adminToken` (scrapers then send
    ///   `Authorization: Bearer TOKEN`).
    /// - `http` holds `purgeFrom`: who may send `PURGE` to `listen.http` (the rules of
    ///   ``parseHTTP(_:)``); absent, nobody.
    /// - `limits` holds the bounds of ``Limits`` (the rules of ``parseLimits(_:)``): among
    ///   them `timeout` (a duration above zero, default ``standardTimeout``) and `maxFrame` (a
    ///   byte size from 1 to ``maxFrameBytesLimit``, default ``standardMaxFrameBytes``).
    ///
    /// An empty (null) value counts as absent, and an empty worker entry (`cache:`) takes
    /// every default.
    /// - Parameters:
    ///   - yaml: the text.
    ///   - baseDirectory: the directory relative paths are resolved against (itself resolved
    ///     against the working directory when relative).
    ///   - fileName: the name put into errors.
    ///   - environment: where `${VAR}` in `auth` is looked up.
    public static func parse(
        yaml: String, baseDirectory: String, fileName: String? = nil, environment: [String: String] = [:]
    ) throws(ConfigError) -> Configuration {
        let context = ParseContext(
            baseDirectory: resolvePath(baseDirectory, against: currentDirectory()),
            fileName: fileName, environment: environment
        )
        return try parse(yaml: yaml, context: context)
    }

    /// Parses `yaml` under `context`; the rules are those of ``parse(yaml:baseDirectory:fileName:environment:)``.
    static func parse(yaml: String, context: ParseContext) throws(ConfigError) -> Configuration {
        let root = try composeDocument(yaml, fileName: context.fileName)
        let top = try root.mapping(
            allowedKeys: topLevelKeys, expecting: "a mapping with the keys \(listing(topLevelKeys, conjunction: "and"))"
        )
        let listeners = try parseListen(
            top.required("listen", describing: "the clients and workers addresses"), context: context
        )
        let secrets = try top.optional("auth").map { (node) throws(ConfigError) in
            try parseAuth(node, environment: context.environment)
        } ?? AuthSecrets()
        try requireSecretsIfReachable(listeners, secrets: secrets)
        let limits = try top.optional("limits").map { (node) throws(ConfigError) in try parseLimits(node) } ?? Limits()
        let metrics = try top.optional("metrics").map { (node) throws(ConfigError) in
            try parseMetrics(node, secrets: secrets, context: context)
        }
        let workers = try top.optional("workers").map { (node) throws(ConfigError) in
            try parseWorkers(node, context: context)
        } ?? []
        let http = try top.optional("http").map { (node) throws(ConfigError) in try parseHTTP(node) } ?? HTTP()
        let domains = try parseDomains(
            top.required("domains", describing: "a mapping of domain name to providers, such as static: [bundle]"),
            workerKinds: knownWorkerKinds + workers.map(\.kind)
        )
        let routes = try top.optional("routes").map { (node) throws(ConfigError) in
            try parseRoutes(node, domains: domains.map(\.name), limits: limits)
        } ?? []
        return Configuration(
            listen: Listen(
                clients: listeners.clients.map(\.address), workers: listeners.workers.address, group: listeners.group,
                http: listeners.http.map(\.address)),
            token: secrets.token, adminToken: secrets.adminToken, workerToken: secrets.workerToken,
            metricsToken: secrets.metricsToken, domains: domains, routes: routes, workers: workers, limits: limits, metrics: metrics,
            http: http
        )
    }

    /// The document's root node.
    /// - Throws: YAML syntax errors and duplicate keys (with their line), and an empty document.
    private static func composeDocument(_ yaml: String, fileName: String?) throws(ConfigError) -> ConfigNode {
        let root: Yams.Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch let error as YamlError {
            throw ConfigError(yamlError: error, fileName: fileName)
        } catch {
            throw ConfigError(file: fileName, keyPath: "", problem: "invalid YAML: \(error)")
        }
        guard let root else {
            throw ConfigError(
                file: fileName, keyPath: "",
                problem: "the configuration is empty; expected at least listen and domains"
            )
        }
        return ConfigNode(node: root, keyPath: "", fileName: fileName)
    }
}

extension ConfigError {
    /// A YAML syntax error as a configuration error at its line.
    init(yamlError: YamlError, fileName: String?) {
        switch yamlError {
        case .scanner(let context, let problem, let mark, _),
             .parser(let context, let problem, let mark, _),
             .composer(let context, let problem, let mark, _):
            let detail = context.map { " \($0.text)" } ?? ""
            self.init(file: fileName, line: mark.line, keyPath: "", problem: "invalid YAML: \(problem)\(detail)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            let keys = listing(duplicates.map { "\"\($0)\"" }, conjunction: "and")
            self.init(
                file: fileName, line: context.mark.line, keyPath: "",
                problem: "\(keys) appear\(duplicates.count == 1 ? "s" : "") more than once in one mapping"
            )
        case .reader(let problem, _, _, _):
            self.init(file: fileName, keyPath: "", problem: "invalid YAML text: \(problem)")
        default:
            self.init(file: fileName, keyPath: "", problem: "invalid YAML: \(yamlError)")
        }
    }
}

extension Configuration {
    /// Parses `metrics`: a TCP address, which needs `metricsToken` (or `adminToken`) when other
    /// machines can reach it.
    static func parseMetrics(_ node: ConfigNode, secrets: AuthSecrets, context: ParseContext) throws(ConfigError)
        -> SocketAddress
    {
        let address = try node.address(baseDirectory: context.baseDirectory)
        guard case .tcp = address else {
            throw node.error("expected a TCP address such as tcp:127.0.0.1:9464 (Prometheus scrapes over HTTP)")
        }
        if secrets.metricsToken == nil, secrets.adminToken == nil, !isLocal(address) {
            throw node.error(
                "\(address) can be reached from other machines, so auth.metricsToken is required "
                    + "(scrapers send Authorization: Bearer TOKEN); listen on 127.0.0.1 otherwise")
        }
        return address
    }
}
