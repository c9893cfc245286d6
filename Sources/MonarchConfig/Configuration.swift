import MonarchWire

/// A validated cluster configuration: where the coordinator listens, the domain table, the
/// routes and the worker pools it launches (docs/configuration.md describes every key).
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
        /// `listen.http`: the HTTP/1.1 listeners (the front door), in file order; none by default.
        public var http: [SocketAddress]

        /// Creates the listener set as given.
        public init(clients: [SocketAddress], workers: SocketAddress, group: String? = nil, http: [SocketAddress] = []) {
            self.clients = clients
            self.workers = workers
            self.group = group
            self.http = http
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
        /// `host:`: the host the route answers for alone (a ``HostPattern`` as written:
        /// `example.com`, `*.example.com`); nil for every host, and for requests naming none.
        public var host: String?
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
        /// `public:`: the route's resources are the same for every caller, so a request carrying
        /// credentials (`Authorization`, `Cookie`, `X-Api-Key`) may be answered from the cache and
        /// its answer kept for others; false (the default) sends such requests to the origin
        /// alone, never cached.
        public var isPublic: Bool
        /// `headers:`: extra request headers (lowercase names, HTTP tokens) that matching reads
        /// forward upstream and that key their cached answers, as if every answer's `Vary`
        /// named them.
        public var headers: [String]
        /// `httpBody`: the largest HTTP request body of matching requests, in place of
        /// ``Limits/httpBodyBytes``; nil keeps that. Never more than a frame of
        /// ``Limits/maxFrameBytes`` carries (``FrameBodyRoom/largestBody(fitting:)``).
        public var httpBodyBytes: Int?

        /// Creates a route as given.
        public init(
            match: String, host: String? = nil, constraints: [String: String] = [:], domain: String,
            upstream: String? = nil, ttl: Duration? = nil, timeout: Duration? = nil, policy: CachePolicy? = nil,
            isPublic: Bool = false, headers: [String] = [], httpBodyBytes: Int? = nil
        ) {
            self.isPublic = isPublic
            self.headers = headers
            self.httpBodyBytes = httpBodyBytes
            self.host = host
            self.match = match
            self.constraints = constraints
            self.domain = domain
            self.upstream = upstream
            self.ttl = ttl
            self.timeout = timeout
            self.policy = policy
        }
    }

    /// The settings of one kind of worker, handed to the workers the coordinator launches as
    /// options of their executables. A setting left `nil` is not passed, so the worker's own
    /// default applies (each is named in Workers/README.md).
    public enum WorkerSettings: Sendable, Equatable {
        /// `monarch-bundle-worker`'s settings.
        case bundle(Bundle)
        /// `monarch-cache-worker`'s settings.
        case cache(Cache)
        /// `monarch-network-worker`'s settings.
        case network(Network)

        /// What a bundle worker is told: where its files are and how it serves them.
        public struct Bundle: Sendable, Equatable {
            /// `root`: the folder served, an absolute path.
            public var root: String
            /// `latency`: a delay before every answer (fixtures that behave like a slow
            /// network); `.zero` for none. Passed in whole milliseconds (`--latency-ms`).
            public var latency: Duration
            /// `maxFile`: the largest file served, in bytes (`--max-file-bytes`); larger ones
            /// are `responseTooLarge` failures.
            public var maxFileBytes: Int?
            /// `dotfiles`: whether paths with a component starting with `.` are served
            /// (`--serve-dotfiles`); by default they are misses.
            public var serveDotfiles: Bool

            /// Settings as given; everything but the folder defaults to the worker's default.
            public init(root: String, latency: Duration = .zero, maxFileBytes: Int? = nil, serveDotfiles: Bool = false) {
                self.root = root
                self.latency = latency
                self.maxFileBytes = maxFileBytes
                self.serveDotfiles = serveDotfiles
            }
        }

        /// What a cache worker is told: where it keeps entries and for how long.
        public struct Cache: Sendable, Equatable {
            /// `store`: a store such as `sqlite:/absolute/path.db`, or `redis://HOST:PORT/DB`
            /// (shared by every cache worker that names it); nil keeps entries in memory only
            /// (`--memory-only`).
            public var store: String?
            /// `memory`: the memory budget for entries, in bytes (`--memory-bytes`).
            public var memoryBytes: Int?
            /// `keepStale`: how long an expired entry is still answered (flagged stale) before
            /// the sweep drops it (or Redis expires it); whole seconds (`--keep-stale-seconds`).
            public var keepStale: Duration?
            /// `password`: the Redis store's password, `${VAR}` expanded; it reaches the
            /// workers in `MONARCH_REDIS_PASSWORD`, never on a command line.
            public var password: String?
            /// `storeTimeout`: how long a Redis connect or command may take before the
            /// connection is dropped and tried again; whole milliseconds (`--store-timeout-ms`).
            public var storeTimeout: Duration?
            /// `storeMaxPending`: the most Redis commands awaiting replies, or SQLite operations
            /// waiting for the disk, per worker; beyond it lookups miss and writes are dropped
            /// at once (`--store-max-pending`).
            public var storeMaxPending: Int?
            /// `memoryGrace`: how long memory keeps answering after a Redis store's change
            /// notifications stopped (Redis down), before it is emptied; whole milliseconds,
            /// 0 empties it at once (`--memory-grace-ms`).
            public var memoryGrace: Duration?

            /// Settings as given; nil means the worker's default.
            public init(
                store: String? = nil, memoryBytes: Int? = nil, keepStale: Duration? = nil, password: String? = nil,
                storeTimeout: Duration? = nil, storeMaxPending: Int? = nil, memoryGrace: Duration? = nil
            ) {
                self.memoryGrace = memoryGrace
                self.store = store
                self.memoryBytes = memoryBytes
                self.keepStale = keepStale
                self.password = password
                self.storeTimeout = storeTimeout
                self.storeMaxPending = storeMaxPending
            }

            /// Whether the store is a Redis database (`redis://`).
            public var usesRedis: Bool { store?.hasPrefix("redis://") == true }
        }

        /// What a network worker is told: which upstreams it may reach and how it fetches.
        public struct Network: Sendable, Equatable {
            /// `allow`: the `host:port` pairs it may reach (`--allow`, repeated); none: nothing.
            public var allow: [String]
            /// `retries`: retries of idempotent requests after connection failures and
            /// 502/503/504 (`--retries`); at least 0.
            public var retries: Int?
            /// `connectTimeout`: how long connecting may take, whole milliseconds above zero
            /// (`--connect-timeout-ms`).
            public var connectTimeout: Duration?
            /// `timeout`: how long a request that carries no deadline may take, whole
            /// milliseconds above zero (`--timeout-ms`).
            public var timeout: Duration?
            /// `maxRedirects`: redirects followed per request (`--max-redirects`); at least 0.
            public var maxRedirects: Int?
            /// `maxResponse`: the largest response body accepted, in bytes, at least 1
            /// (`--max-response-bytes`).
            public var maxResponseBytes: Int?
            /// `maxHostConnections`: connections open to one upstream host, at least 1
            /// (`--max-host-connections`); the worker announces it as its capacity per host.
            public var maxHostConnections: Int?
            /// `capacity`: requests run at once in all, announced to the coordinator, at
            /// least 1 (`--capacity`).
            public var capacity: Int?

            /// Settings as given; nil means the worker's default.
            public init(
                allow: [String] = [], retries: Int? = nil, connectTimeout: Duration? = nil, timeout: Duration? = nil,
                maxRedirects: Int? = nil, maxResponseBytes: Int? = nil, maxHostConnections: Int? = nil,
                capacity: Int? = nil
            ) {
                self.allow = allow
                self.retries = retries
                self.connectTimeout = connectTimeout
                self.timeout = timeout
                self.maxRedirects = maxRedirects
                self.maxResponseBytes = maxResponseBytes
                self.maxHostConnections = maxHostConnections
                self.capacity = capacity
            }
        }

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
        /// `logLevel`: the level the pool's workers log at (one of ``logLevels``); nil: the
        /// level `monarch up` runs at.
        public var logLevel: String?

        /// Creates a pool as given.
        public init(kind: String, count: Int, settings: WorkerSettings, logLevel: String? = nil) {
            self.kind = kind
            self.count = count
            self.settings = settings
            self.logLevel = logLevel
        }
    }

    /// Where the coordinator listens.
    public var listen: Listen
    /// `auth.token` after `${VAR}` expansion: the clients' secret, presented in `hello` (requests,
    /// and invalidations and watches of named keys, paths and tags); `nil` when none is configured.
    public var token: String?
    /// `auth.adminToken`: the admins' secret (scale, status, prefix invalidations and watches,
    /// and everything a client may do); `nil` when none is configured.
    public var adminToken: String?
    /// `auth.workerToken`: the secret of workers that dial in from elsewhere (the workers the
    /// coordinator starts present a key of their own); `nil` when none is configured.
    public var workerToken: String?
    /// `auth.metricsToken`: the secret metrics scrapers send (`Authorization: Bearer`); `nil`
    /// when none is configured.
    public var metricsToken: String?
    /// The domain table, in file order.
    public var domains: [Domain]
    /// The routes, in file order (the router tries them in this order).
    public var routes: [Route]
    /// The worker pools, in file order.
    public var workers: [WorkerPool]
    /// Every bound the coordinator keeps (`limits:`), the request timeout and frame size among them.
    public var limits: Limits
    /// `metrics`: where the coordinator serves Prometheus metrics (`GET /metrics`) and its
    /// admin endpoints (`/livez`, `/readyz`, `/status`); nil: off.
    public var metrics: SocketAddress?
    /// `http`: what the HTTP front door allows besides reads (who may `PURGE`).
    public var http: HTTP

    /// Creates a configuration as given; the limits default to their standard values, and
    /// nobody may purge over HTTP.
    public init(
        listen: Listen, token: String? = nil, adminToken: String? = nil, workerToken: String? = nil,
        metricsToken: String? = nil, domains: [Domain], routes: [Route] = [], workers: [WorkerPool] = [],
        limits: Limits = Limits(), metrics: SocketAddress? = nil, http: HTTP = HTTP()
    ) {
        self.http = http
        self.listen = listen
        self.token = token
        self.adminToken = adminToken
        self.workerToken = workerToken
        self.metricsToken = metricsToken
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

    /// The log levels a worker pool's `logLevel` may name, least severe first (swift-log's).
    public static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    /// The default request deadline when `limits.timeout` is absent: 30 seconds.
    public static let standardTimeout: Duration = .seconds(30)

    /// The default frame size limit when `limits.maxFrame` is absent: 16 MiB.
    public static let standardMaxFrameBytes = 16 << 20

    /// The largest `limits.maxFrame` a configuration may set: 256 MiB.
    public static let maxFrameBytesLimit = 256 << 20

    /// Whether `address` can only be reached from this machine: every Unix socket, and TCP on
    /// `localhost`, `::1` or `127.x.x.x`. Listeners that are not local need a token: client
    /// listeners `auth.token`, the worker listener `auth.workerToken`, the metrics address
    /// `auth.metricsToken` (or `auth.adminToken`).
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
