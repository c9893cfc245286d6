import MonarchWire

/// A validated cluster configuration: where the coordinator listens, the domain table, the
/// routes and the worker pools it launches (DESIGN.md, "Configuration").
///
/// Values built by ``load(file:environment:)`` or ``parse(yaml:baseDirectory:fileName:environment:)``
/// have passed every rule those functions document: relative paths are absolute, `${VAR}`s are
/// expanded, every route names a domain of ``domains``, and every provider is a worker kind.
/// Values built with the memberwise initialisers are taken as they are.
public struct Configuration: Sendable, Equatable {
    /// Where the coordinator accepts connections.
    public struct Listen: Sendable, Equatable {
        /// The listeners for clients, in file order; a parsed configuration has at least one.
        public var clients: [SocketAddress]
        /// The listener workers dial in to.
        public var workers: SocketAddress
        /// `listen.group`: the group that may connect to the Unix sockets too (they are
        /// created `0660` and given to it); nil: only the coordinator's user (`0600`).
        public var group: String?

        /// Creates the listener set as given.
        public init(clients: [SocketAddress], workers: SocketAddress, group: String? = nil) {
            self.clients = clients
            self.workers = workers
            self.group = group
        }
    }

    /// One row of the domain table: a domain and the providers a request for it reaches.
    public struct Domain: Sendable, Equatable {
        /// The domain's name (`[a-z][a-z0-9-]*`).
        public var name: String
        /// The worker kinds that serve the domain, in chain order (first asked first); at
        /// least one, none twice.
        public var providers: [String]

        /// Creates a domain as given.
        public init(name: String, providers: [String]) {
            self.name = name
            self.providers = providers
        }
    }

    /// A path pattern and what the coordinator does with requests that match it.
    public struct Route: Sendable, Equatable {
        /// The path pattern (`users/:id`, `assets/...`); its syntax is the router's to check.
        public var match: String
        /// `where:`: parameter name → regular expression the parameter must match; each one
        /// compiles with Swift's `Regex`.
        public var constraints: [String: String]
        /// The domain matching requests go to; always one of ``Configuration/domains``.
        public var domain: String
        /// The upstream URL template for network providers, if any.
        public var upstream: String?
        /// How long a cached response stays fresh; `nil` for no expiry. Positive when set.
        public var ttl: Duration?
        /// The deadline for matching requests; `nil` for ``Limits/timeout``.
        /// Positive when set.
        public var timeout: Duration?
        /// The cache policy for matching requests that do not name their own.
        public var policy: CachePolicy?

        /// Creates a route as given.
        public init(
            match: String, constraints: [String: String] = [:], domain: String, upstream: String? = nil,
            ttl: Duration? = nil, timeout: Duration? = nil, policy: CachePolicy? = nil
        ) {
            self.match = match
            self.constraints = constraints
            self.domain = domain
            self.upstream = upstream
            self.ttl = ttl
            self.timeout = timeout
            self.policy = policy
        }
    }

    /// The settings of one kind of worker, handed to the workers the coordinator launches.
    public enum WorkerSettings: Sendable, Equatable {
        /// Serves files under `root` (an absolute path), each answer delayed by `latency`
        /// (simulated latency for fixtures; `.zero` unless configured).
        case bundle(root: String, latency: Duration)
        /// Keeps responses in memory (at most `memoryBytes` when given) and, when `store` is
        /// given, in a store such as `sqlite:/absolute/path.db`; `store == nil` means memory only.
        case cache(store: String?, memoryBytes: Int?)
        /// Fetches from upstreams; `allow` lists the `host:port` pairs it may reach.
        case network(allow: [String])

        /// The worker kind these settings belong to: `bundle`, `cache` or `network`.
        public var kind: String {
            switch self {
            case .bundle: "bundle"
            case .cache: "cache"
            case .network: "network"
            }
        }
    }

    /// The workers of one kind the coordinator launches and supervises.
    public struct WorkerPool: Sendable, Equatable {
        /// The worker kind (the providers' name in ``Domain/providers``).
        public var kind: String
        /// How many workers to launch at start (0: workers of this kind only dial in).
        public var count: Int
        /// The settings passed to each worker of the pool.
        public var settings: WorkerSettings

        /// Creates a pool as given.
        public init(kind: String, count: Int, settings: WorkerSettings) {
            self.kind = kind
            self.count = count
            self.settings = settings
        }
    }

    /// Where the coordinator listens.
    public var listen: Listen
    /// `auth.token` after `${VAR}` expansion: what clients and workers present in `hello`;
    /// `nil` when none is configured.
    public var token: String?
    /// The domain table, in file order.
    public var domains: [Domain]
    /// The routes, in file order (the router tries them in this order).
    public var routes: [Route]
    /// The worker pools, in file order.
    public var workers: [WorkerPool]
    /// Every bound the coordinator keeps (`limits:`), the request timeout and frame size among them.
    public var limits: Limits
    /// `metrics`: where the coordinator serves Prometheus metrics (`GET /metrics`); nil: off.
    public var metrics: SocketAddress?

    /// Creates a configuration as given; the limits default to their standard values.
    public init(
        listen: Listen, token: String? = nil, domains: [Domain], routes: [Route] = [], workers: [WorkerPool] = [],
        limits: Limits = Limits(), metrics: SocketAddress? = nil
    ) {
        self.listen = listen
        self.token = token
        self.domains = domains
        self.routes = routes
        self.workers = workers
        self.limits = limits
        self.metrics = metrics
    }

    /// The domain called `name`, if the table has one.
    public func domain(named name: String) -> Domain? {
        domains.first { $0.name == name }
    }

    /// The pool of workers of `kind`, if one is configured.
    public func workerPool(kind: String) -> WorkerPool? {
        workers.first { $0.kind == kind }
    }
}

extension Configuration {
    /// The worker kinds Monarch ships, each accepted as a provider even without a `workers`
    /// entry (such workers may dial in from elsewhere): `bundle`, `cache`, `network`.
    public static let knownWorkerKinds = ["bundle", "cache", "network"]

    /// The default request deadline when `limits.timeout` is absent: 30 seconds.
    public static let standardTimeout: Duration = .seconds(30)

    /// The default frame size limit when `limits.maxFrame` is absent: 16 MiB.
    public static let standardMaxFrameBytes = 16 << 20

    /// The largest `limits.maxFrame` a configuration may set: 256 MiB.
    public static let maxFrameBytesLimit = 256 << 20

    /// Whether `address` can only be reached from this machine: every Unix socket, and TCP on
    /// `localhost`, `::1` or `127.x.x.x`. Listeners that are not local need `auth.token`.
    public static func isLocal(_ address: SocketAddress) -> Bool {
        switch address {
        case .unix: return true
        case .tcp(let host, _):
            return host == "localhost" || host == "::1" || isIPv4Loopback(host)
        }
    }

    private static func isIPv4Loopback(_ host: String) -> Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
