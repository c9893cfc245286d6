extension Configuration {
    /// Every bound the coordinator keeps (`limits:` in the file): its queues, tables and
    /// connections never grow past them. Each has a standard value, used when the key is absent.
    public struct Limits: Sendable, Equatable {
        /// `timeout`: the deadline of requests that neither name one nor match a route with a
        /// `timeout`.
        public var timeout: Duration = Configuration.standardTimeout
        /// `maxFrame`: the largest frame accepted on a connection once its hello is accepted
        /// (never above ``Configuration/maxFrameBytesLimit``).
        public var maxFrameBytes: Int = Configuration.standardMaxFrameBytes
        /// `helloFrame`: the largest frame accepted before the hello is (a connection that has
        /// not proved who it is cannot make the coordinator buffer a large frame).
        public var helloFrameBytes: Int = 64 << 10
        /// `helloTimeout`: how long a new connection may take to send its hello.
        public var helloTimeout: Duration = .seconds(10)
        /// `handshakes`: connections accepted that have not sent their hello yet; more are
        /// closed at once.
        public var handshakes = 128
        /// `handshakesPerPeer`: of the ``handshakes`` at one kind of door (client Unix sockets,
        /// client TCP listeners, the worker listener: each has ``handshakes`` of its own), those
        /// one peer address may keep once they have waited a second; a peer past its share, or
        /// a full door, makes room by closing the longest-waiting handshake of the peer holding
        /// the most.
        public var handshakesPerPeer = 32
        /// `clients`: client connections at once (handshakes on client listeners included);
        /// more are closed at once, so descriptors stay for workers.
        public var clients = 1024
        /// `clientsPerPeer`: client connections one TCP peer address may hold at once
        /// (handshakes included); more from it are closed at once.
        public var clientsPerPeer = 512
        /// `adminClients`: of the ``clients``, those kept for admins (at most half of them): a
        /// connection past the others stays only if its hello proves it an admin.
        public var adminClients = 16
        /// `invalidationsPerSecond`: invalidations one client connection may make per second
        /// (as many at once after a quiet second); more are answered `overloaded`. Admins are
        /// not held to it.
        public var invalidationsPerSecond = 100
        /// `workers`: worker connections at once; more are closed at once.
        public var workers = 256
        /// `idleTimeout`: a client connection with no request in flight and no watch that sends
        /// nothing for this long is closed, and so is one that takes none of its answers for
        /// this long.
        public var idleTimeout: Duration = .seconds(300)
        /// `inFlightPerClient`: requests (and admin exchanges) in flight on one client
        /// connection; more are answered `overloaded`.
        public var inFlightPerClient = 256
        /// `inFlight`: requests in flight across all clients; more are answered `overloaded`.
        public var inFlight = 10_000
        /// `clientQueue`: answers queued for one client and not yet taken by it: a client's
        /// requests start only as far as their answers fit in it (by the size of its recent
        /// answers), and while more than this waits unread its responses are answered
        /// `overloaded`. At least ``maxFrameBytes``.
        public var clientQueueBytes = 64 << 20
        /// `pathBytes`: the longest request path (with its `?query`), in bytes.
        public var pathBytes = 8 << 10
        /// `pathComponents`: the most `/`-separated components in a request path.
        public var pathComponents = 128
        /// `headers`: the most headers on one request.
        public var headers = 64
        /// `headerBytes`: the most bytes of header names and values on one request.
        public var headerBytes = 32 << 10
        /// `queryItems`: the most query items on one request (path and `query` field together).
        public var queryItems = 256
        /// `queryBytes`: the most bytes of query names and values on one request.
        public var queryBytes = 16 << 10
        /// `backgroundTasks`: write-backs and background refreshes running at once; more are
        /// dropped (a cache then misses; it never lies).
        public var backgroundTasks = 1024
        /// `invalidations`: invalidations remembered (to drop write-backs of trips that started
        /// before them); past this they are folded into one that covers every key.
        public var invalidations = 1000
        /// `invalidateBytes`: the longest key, prefix, tag or path an `invalidate` or `watch`
        /// may name.
        public var invalidateBytes = 16 << 10
        /// `tagsPerEntry`: the most tags a cached entry keeps from its upstream's
        /// `Surrogate-Key` / `Cache-Tag` header; later ones are ignored.
        public var tagsPerEntry = 32
        /// `tagBytes`: the longest tag kept; longer ones are ignored.
        public var tagBytes = 256
        /// `watchesPerClient`: watches one client connection may hold; more are refused
        /// (`overloaded`).
        public var watchesPerClient = 64
        /// `watchEvents`: `changed` events queued for one watcher while its client does not
        /// read; past this they are dropped and the watcher gets one `overflow` event.
        public var watchEvents = 256
        /// `watchQueue`: how far one watcher may fall behind, in bytes of `changed` events: those
        /// waiting for it (queued, or written and not taken by its connection) plus those it
        /// missed since it last caught up. Past this its connection is closed (as Redis closes a
        /// pub/sub client past its output buffer limit). At least 64 KiB.
        public var watchQueueBytes = 1 << 20
        /// `watchQueueTotal`: bytes of `changed` events waiting for all watchers together (and
        /// waiting to be fanned out to them); past this new events are dropped and counted, and
        /// each watch concerned gets an `overflow`. At least ``watchQueueBytes``.
        public var watchQueueTotalBytes = 64 << 20
        /// `sharedChanges`: ids of changes other coordinators made to a shared cache store
        /// (Redis) remembered, so that the copies every cache worker forwards reach watchers
        /// once.
        public var sharedChanges = 4096
        /// `hotTier`: the bytes the coordinator's hot tier may hold — the cache hits it answers
        /// itself, without asking a cache worker (their bodies, headers and encoding, and the
        /// bookkeeping around them). 0 turns the hot tier off.
        public var hotTierBytes = 64 << 20
        /// `hotTierEntry`: the largest body the hot tier holds (a 1MB body under the standard
        /// 1MB; its headers count in ``hotTierBytes``); larger ones are answered by the cache
        /// workers alone.
        public var hotTierEntryBytes = 1 << 20
        /// `routeCache`: request paths (of at most 512 bytes) the coordinator keeps parsed and
        /// routed, so that a path asked for again and again is worked out once; when full, a
        /// new path takes the place of one not asked for again lately. 0 keeps none.
        public var routeCache = 4096
        /// `heartbeat`: how often the coordinator pings each worker; a worker silent for two
        /// beats is taken out of rotation (and a local one killed and restarted).
        public var heartbeat: Duration = .seconds(1)
        /// `restarts`: restarts of a pool's local workers allowed within ``restartWindow``;
        /// one more fails the pool until it is scaled again.
        public var restarts = 10
        /// `restartWindow`: the window ``restarts`` are counted in.
        public var restartWindow: Duration = .seconds(60)
        /// `workerStarts`: local workers started (by `monarch up` or a `scale`) that have not
        /// registered yet, at once across pools; the rest start as these register. Never more
        /// than half of ``handshakes`` take part (the rest stays for other connections), nor more
        /// than ``workers`` leaves room for.
        public var workerStarts = 8
        /// `httpRequestLine`: the longest HTTP request line (over it: 414).
        public var httpRequestLineBytes = 8000
        /// `httpHeaderBlock`: the most bytes of an HTTP request's header lines (over it: 431).
        public var httpHeaderBlockBytes = 32 << 10
        /// `httpHeaders`: the most header lines of an HTTP request (over it: 431).
        public var httpHeaders = 100
        /// `httpBody`: the largest HTTP request body (over it: 413).
        public var httpBodyBytes = 1 << 20
        /// `httpHeaderTimeout`: how long an HTTP request's head may take to arrive, from its
        /// first byte (over it: 408 and the connection is closed).
        public var httpHeaderTimeout: Duration = .seconds(10)
        /// `httpKeepAlive`: how long an idle HTTP connection is kept open between requests.
        public var httpKeepAlive: Duration = .seconds(75)
        /// `httpRequests`: the requests one HTTP connection may make; the last is answered with
        /// `Connection: close`.
        public var httpRequests = 1000
        /// `httpConnectionAge`: how long one HTTP connection may live; the next answer after it
        /// closes it.
        public var httpConnectionAge: Duration = .seconds(3600)
        /// `httpConnections`: HTTP connections open at once. At the cap, a new connection takes
        /// the place of an idle one of the TCP peer holding the most (when that peer holds more
        /// than the newcomer's); otherwise it is closed at once.
        public var httpConnections = 1024
        /// `httpConnectionsPerPeer`: HTTP connections one TCP peer address may hold at once;
        /// more from it are closed at once.
        public var httpConnectionsPerPeer = 256

        /// The standard limits.
        public init() {}
    }

    /// The keys of `limits:`, in the order errors list them.
    static let limitKeys = [
        "timeout", "maxFrame", "helloFrame", "helloTimeout", "handshakes", "handshakesPerPeer", "clients",
        "clientsPerPeer", "adminClients", "workers", "idleTimeout",
        "inFlightPerClient", "inFlight", "clientQueue", "pathBytes", "pathComponents", "headers", "headerBytes",
        "queryItems", "queryBytes", "backgroundTasks", "invalidations", "invalidationsPerSecond",
        "invalidateBytes", "tagsPerEntry", "tagBytes",
        "watchesPerClient", "watchEvents", "watchQueue", "watchQueueTotal", "sharedChanges", "hotTier", "hotTierEntry",
        "routeCache", "heartbeat",
        "restarts", "restartWindow",
        "workerStarts",
        "httpRequestLine", "httpHeaderBlock", "httpHeaders", "httpBody", "httpHeaderTimeout", "httpKeepAlive",
        "httpRequests", "httpConnectionAge", "httpConnections", "httpConnectionsPerPeer",
    ]

    /// Parses `limits`: durations above zero (`timeout`, `helloTimeout`, `idleTimeout`), byte
    /// sizes (`maxFrame` from 1 to ``maxFrameBytesLimit``; `helloFrame` at least 1 KiB and at
    /// most `maxFrame`; `clientQueue` at least `maxFrame`; `watchQueue` at least 64 KiB and
    /// `watchQueueTotal` at least `watchQueue`; `hotTier` at least 0; the other sizes at least
    /// 1) and counts of at least 1 (`routeCache` at least 0); each absent one keeps its standard value
    /// (see ``Limits``).
    static func parseLimits(_ node: ConfigNode) throws(ConfigError) -> Limits {
        let map = try node.mapping(allowedKeys: limitKeys)
        var limits = Limits()
        func duration(_ key: String, _ value: inout Duration) throws(ConfigError) {
            if let node = map.optional(key) { value = try node.positiveDuration() }
        }
        func count(_ key: String, _ value: inout Int) throws(ConfigError) {
            if let node = map.optional(key) { value = try node.integer(atLeast: 1) }
        }
        func size(_ key: String, _ value: inout Int, atLeast minimum: Int = 1, describing: String = "1 byte")
            throws(ConfigError)
        {
            guard let node = map.optional(key) else { return }
            let bytes = try node.byteSize()
            guard bytes >= minimum else { throw node.error("must be at least \(describing), got \(bytes) bytes") }
            value = bytes
        }
        try duration("timeout", &limits.timeout)
        if let maxFrameNode = map.optional("maxFrame") {
            let bytes = try maxFrameNode.byteSize()
            guard (1...maxFrameBytesLimit).contains(bytes) else {
                throw maxFrameNode.error("must be between 1 byte and 256MiB, got \(bytes) bytes")
            }
            limits.maxFrameBytes = bytes
        }
        limits.helloFrameBytes = min(limits.helloFrameBytes, limits.maxFrameBytes)
        try size("helloFrame", &limits.helloFrameBytes, atLeast: 1 << 10, describing: "1KB")
        if let node = map.optional("helloFrame"), limits.helloFrameBytes > limits.maxFrameBytes {
            throw node.error("must not be above maxFrame (\(limits.maxFrameBytes) bytes)")
        }
        try duration("helloTimeout", &limits.helloTimeout)
        try count("handshakes", &limits.handshakes)
        try count("handshakesPerPeer", &limits.handshakesPerPeer)
        try count("clients", &limits.clients)
        try count("clientsPerPeer", &limits.clientsPerPeer)
        try count("adminClients", &limits.adminClients)
        try count("workers", &limits.workers)
        try duration("idleTimeout", &limits.idleTimeout)
        try count("inFlightPerClient", &limits.inFlightPerClient)
        try count("inFlight", &limits.inFlight)
        limits.clientQueueBytes = max(limits.clientQueueBytes, limits.maxFrameBytes)
        try size(
            "clientQueue", &limits.clientQueueBytes, atLeast: limits.maxFrameBytes,
            describing: "maxFrame (\(limits.maxFrameBytes) bytes), so that any one answer fits")
        try size("pathBytes", &limits.pathBytes)
        try count("pathComponents", &limits.pathComponents)
        try count("headers", &limits.headers)
        try size("headerBytes", &limits.headerBytes)
        try count("queryItems", &limits.queryItems)
        try size("queryBytes", &limits.queryBytes)
        try count("backgroundTasks", &limits.backgroundTasks)
        try count("invalidations", &limits.invalidations)
        try count("invalidationsPerSecond", &limits.invalidationsPerSecond)
        try size("invalidateBytes", &limits.invalidateBytes)
        try count("tagsPerEntry", &limits.tagsPerEntry)
        try size("tagBytes", &limits.tagBytes)
        try count("watchesPerClient", &limits.watchesPerClient)
        try count("watchEvents", &limits.watchEvents)
        try size("watchQueue", &limits.watchQueueBytes, atLeast: 64 << 10, describing: "64KB")
        limits.watchQueueTotalBytes = max(limits.watchQueueTotalBytes, limits.watchQueueBytes)
        try size(
            "watchQueueTotal", &limits.watchQueueTotalBytes, atLeast: limits.watchQueueBytes,
            describing: "watchQueue (\(limits.watchQueueBytes) bytes)")
        try count("sharedChanges", &limits.sharedChanges)
        try size("hotTier", &limits.hotTierBytes, atLeast: 0, describing: "0 bytes (0 turns it off)")
        try size("hotTierEntry", &limits.hotTierEntryBytes)
        if let node = map.optional("routeCache") { limits.routeCache = try node.integer(atLeast: 0) }
        try duration("heartbeat", &limits.heartbeat)
        try count("restarts", &limits.restarts)
        try duration("restartWindow", &limits.restartWindow)
        try count("workerStarts", &limits.workerStarts)
        try size("httpRequestLine", &limits.httpRequestLineBytes, atLeast: 64, describing: "64 bytes")
        try size("httpHeaderBlock", &limits.httpHeaderBlockBytes, atLeast: 1 << 10, describing: "1KB")
        try count("httpHeaders", &limits.httpHeaders)
        try size("httpBody", &limits.httpBodyBytes, atLeast: 0, describing: "0 bytes")
        try duration("httpHeaderTimeout", &limits.httpHeaderTimeout)
        try duration("httpKeepAlive", &limits.httpKeepAlive)
        try count("httpRequests", &limits.httpRequests)
        try duration("httpConnectionAge", &limits.httpConnectionAge)
        try count("httpConnections", &limits.httpConnections)
        try count("httpConnectionsPerPeer", &limits.httpConnectionsPerPeer)
        return limits
    }
}
