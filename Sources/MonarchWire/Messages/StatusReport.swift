/// What a coordinator reports in answer to `status`: its pools, its workers, its own counters,
/// and per domain how requests fared over the last minute (Protocols/README.md, `status`;
/// `schemas/status-report.schema.json`). Fields may be added; these keep their meaning.
public struct StatusReport: Codable, Sendable, Equatable {
    /// One pool of workers of a kind.
    public struct Pool: Codable, Sendable, Equatable {
        /// How a pool is doing.
        public enum State: String, Codable, Sendable {
            /// As many workers serve as are wanted (or, for a pool of workers that dial in, at least one).
            case ok
            /// Fewer serve than are wanted (a restart under way, a worker unresponsive), or none.
            case degraded
            /// It restarted too often and is left alone until scaled again (see `reason`).
            case failed
            /// A `scale` of it is under way.
            case scaling
        }

        /// The workers' kind.
        public var kind: String
        /// Local workers wanted; nil for a kind the coordinator does not launch.
        public var desired: Int?
        /// Workers serving now (local and remote).
        public var live: Int
        /// How the pool is doing.
        public var state: State
        /// Why the pool failed, when it did.
        public var reason: String?

        /// Creates a pool entry.
        public init(kind: String, desired: Int?, live: Int, state: State, reason: String? = nil) {
            self.kind = kind
            self.desired = desired
            self.live = live
            self.state = state
            self.reason = reason
        }
    }

    /// One worker: registered, or a local one being started.
    public struct Worker: Codable, Sendable, Equatable {
        /// How a worker is doing.
        public enum State: String, Codable, Sendable {
            /// Registered and taking requests.
            case ready
            /// Taking no new requests, finishing its own (scale-down).
            case draining
            /// Silent for two heartbeats: out of rotation, being killed or disconnected.
            case unresponsive
            /// A local worker started and not registered yet.
            case starting
            /// A local worker waiting for its restart.
            case restarting
            /// A local worker of a failed pool: not restarted.
            case stopped
        }

        /// Its name (`bundle-1`): the id the coordinator knows it by.
        public var id: String
        /// Its kind.
        public var kind: String
        /// Whether `monarch up` started it (false: it dialled in from elsewhere).
        public var local: Bool
        /// Its process id, as it reported it (local workers: as started).
        public var pid: Int?
        /// Its name as it said in its hello.
        public var name: String?
        /// How it is doing.
        public var state: State
        /// Requests sent to it and not answered yet.
        public var inFlight: Int
        /// Requests it runs at once at most (its hello's `capacity`).
        public var capacity: Int
        /// Requests forwarded to it.
        public var forwarded: Int
        /// Answers it gave (responses, misses, failures).
        public var answered: Int
        /// Of those, failures.
        public var failures: Int
        /// Cancelled requests it never answered, forgotten.
        public var forgotten: Int
        /// Times its local process was restarted.
        public var restarts: Int
        /// Time since it registered (or, not registered, since it was started), in ms.
        public var uptimeMs: Int
        /// Its resident memory, for local workers, in bytes.
        public var rssBytes: Int?
        /// Its shared store (a cache worker on Redis), as it last reported; nil for others.
        public var store: Store?

        /// A cache worker's shared store (Redis): where it is, whether it is reachable, and
        /// what was lost while it was not.
        public struct Store: Codable, Sendable, Equatable {
            /// Where a worker's connection to its store is.
            public enum State: String, Codable, Sendable {
                /// Not connected yet since the worker started.
                case connecting
                /// Connected: lookups and writes reach the store.
                case connected
                /// Lost, and being tried again with back-off: lookups miss, writes are dropped.
                case reconnecting
                /// Closed (the worker is stopping).
                case closed
            }

            /// The store, such as `redis://10.0.0.5:6379/0`.
            public var address: String
            /// Whether the worker reaches the store.
            public var state: State
            /// Whether the worker hears the other workers' changes (its memory stays coherent).
            public var subscribed: Bool
            /// Times the connection came back after it was lost.
            public var reconnects: Int
            /// Stores and invalidations dropped because the store could not be reached.
            public var droppedWrites: Int
            /// Lookups that missed because the store could not be reached.
            public var unavailableReads: Int

            /// Creates a store entry.
            public init(address: String, state: State, subscribed: Bool, reconnects: Int, droppedWrites: Int, unavailableReads: Int) {
                self.address = address
                self.state = state
                self.subscribed = subscribed
                self.reconnects = reconnects
                self.droppedWrites = droppedWrites
                self.unavailableReads = unavailableReads
            }

            /// The store's figures from a cache worker's `status` result (`store`,
            /// `storeState`, …); nil when the worker has no shared store.
            public init?(figures: [String: JSONValue]) {
                guard case .string(let address)? = figures["store"], case .string(let stateName)? = figures["storeState"],
                    let state = State(rawValue: stateName)
                else {
                    return nil
                }
                func count(_ key: String) -> Int {
                    if case .integer(let value)? = figures[key] { return Int(value) }
                    return 0
                }
                var subscribed = false
                if case .bool(let value)? = figures["storeSubscribed"] { subscribed = value }
                self.init(
                    address: address, state: state, subscribed: subscribed, reconnects: count("storeReconnects"),
                    droppedWrites: count("storeDroppedWrites"), unavailableReads: count("storeUnavailableReads"))
            }
        }

        /// Creates a worker entry.
        public init(
            id: String, kind: String, local: Bool, pid: Int?, name: String?, state: State, inFlight: Int, capacity: Int,
            forwarded: Int, answered: Int, failures: Int, forgotten: Int, restarts: Int, uptimeMs: Int, rssBytes: Int?
        ) {
            self.id = id
            self.kind = kind
            self.local = local
            self.pid = pid
            self.name = name
            self.state = state
            self.inFlight = inFlight
            self.capacity = capacity
            self.forwarded = forwarded
            self.answered = answered
            self.failures = failures
            self.forgotten = forgotten
            self.restarts = restarts
            self.uptimeMs = uptimeMs
            self.rssBytes = rssBytes
        }
    }

    /// How one domain's requests fared over the last minute.
    public struct Domain: Codable, Sendable, Equatable {
        /// The domain's name.
        public var name: String
        /// Requests answered (responses and failures) in the last minute.
        public var requests: Int
        /// Of those, responses from a cache.
        public var hits: Int
        /// `hits / requests`, 0 with no requests.
        public var hitRatio: Double
        /// Latency percentiles over the last minute, in ms (0 with no requests).
        public var p50Ms: Double
        /// The 99th percentile.
        public var p99Ms: Double
        /// The 99.9th percentile.
        public var p999Ms: Double
        /// Of the hits, those the coordinator's hot tier answered (absent when it has none).
        public var hotHits: Int?

        /// Creates a domain entry.
        public init(
            name: String, requests: Int, hits: Int, hitRatio: Double, p50Ms: Double, p99Ms: Double, p999Ms: Double,
            hotHits: Int? = nil
        ) {
            self.hotHits = hotHits
            self.name = name
            self.requests = requests
            self.hits = hits
            self.hitRatio = hitRatio
            self.p50Ms = p50Ms
            self.p99Ms = p99Ms
            self.p999Ms = p999Ms
        }
    }

    /// The coordinator's hot tier: the cache hits it answers itself.
    public struct HotTier: Codable, Sendable, Equatable {
        /// The bytes it may hold (`limits.hotTier`).
        public var budgetBytes: Int
        /// The largest body it holds (`limits.hotTierEntry`).
        public var entryLimitBytes: Int
        /// Answers held now.
        public var entries: Int
        /// What they cost, in bytes.
        public var bytes: Int
        /// Hits answered since start.
        public var hits: Int
        /// Cache workers' answers kept since start.
        public var kept: Int
        /// Answers evicted to make room since start.
        public var evictions: Int
        /// Cache workers' answers not kept since start because a change (invalidation,
        /// write-back, another coordinator's change) raced their read.
        public var refusedAfterChange: Int

        /// Creates the hot tier's figures.
        public init(
            budgetBytes: Int, entryLimitBytes: Int, entries: Int, bytes: Int, hits: Int, kept: Int, evictions: Int,
            refusedAfterChange: Int
        ) {
            self.budgetBytes = budgetBytes
            self.entryLimitBytes = entryLimitBytes
            self.entries = entries
            self.bytes = bytes
            self.hits = hits
            self.kept = kept
            self.evictions = evictions
            self.refusedAfterChange = refusedAfterChange
        }
    }

    /// Monarch's release (`MonarchRelease.version`).
    public var version: String
    /// Time since the coordinator started, in ms.
    public var uptimeMs: Int
    /// The pools, by kind in name order.
    public var pools: [Pool]
    /// The workers, by kind then id.
    public var workers: [Worker]
    /// Per domain, in name order.
    public var domains: [Domain]
    /// Client connections.
    public var clients: Int
    /// Requests in flight.
    public var requestsInFlight: Int
    /// Answers since start, by the provider that answered (`cache`, `bundle`, `network`, …).
    public var answersBySource: [String: Int]
    /// Failures since start, by code.
    public var failuresByCode: [String: Int]
    /// Trips down the chain started.
    public var tripsStarted: Int
    /// Requests that joined an identical trip in flight.
    public var tripsJoined: Int
    /// Joiners whose shared answer was private, so they made their own trip.
    public var joinersAskedAlone: Int
    /// Requests waiting for a worker with room.
    public var waitingForWorkers: Int
    /// Requests answered `overloaded`.
    public var overloaded: Int
    /// Connections closed at once because a cap was reached.
    public var connectionsRefused: Int
    /// Clients closed for leaving too many answers unread.
    public var slowReadersClosed: Int
    /// Clients closed after their idle timeout.
    public var idleClientsClosed: Int
    /// Workers taken out of rotation for missing heartbeats.
    public var unresponsiveWorkers: Int
    /// Whether the coordinator is draining.
    public var draining: Bool
    /// Background refreshes started (`cacheThenRefresh`).
    public var refreshesStarted: Int
    /// Write-backs and refreshes running.
    public var backgroundRunning: Int
    /// Write-backs and refreshes skipped at the limit.
    public var backgroundDropped: Int
    /// Invalidations remembered against write-backs under way.
    public var invalidationsRemembered: Int
    /// Write-backs cache workers acknowledged.
    public var writeBacks: Int
    /// Write-backs refused or lost.
    public var writeBackFailures: Int
    /// Watches active now, all clients together (absent from coordinators without watches).
    public var watches: Int?
    /// `changed` events sent to watchers since start.
    public var watchEventsSent: Int?
    /// `changed` events dropped for watchers that did not read (each such run ends in an
    /// `overflow` event) since start.
    public var watchEventsDropped: Int?
    /// Watcher connections closed since start for falling more than `limits.watchQueue` behind.
    public var watchersClosed: Int?
    /// Changes made through other coordinators sharing a cache store that watchers were told
    /// of since start, each once however many cache workers forwarded it.
    public var sharedChanges: Int?
    /// Requests refused `forbidden` since start: admin commands from clients.
    public var forbidden: Int?
    /// Hellos refused since start for the secret they presented (or did not).
    public var unauthorized: Int?
    /// Heartbeats that ran late since start (the coordinator's own loop was held up), on which
    /// no worker was judged.
    public var lateHeartbeats: Int?
    /// The hot tier (absent when it is off).
    public var hotTier: HotTier?

    /// Creates a report.
    public init(
        version: String, uptimeMs: Int, pools: [Pool], workers: [Worker], domains: [Domain], clients: Int,
        requestsInFlight: Int, answersBySource: [String: Int], failuresByCode: [String: Int], tripsStarted: Int,
        tripsJoined: Int, joinersAskedAlone: Int, waitingForWorkers: Int, overloaded: Int, connectionsRefused: Int,
        slowReadersClosed: Int, idleClientsClosed: Int, unresponsiveWorkers: Int, draining: Bool, refreshesStarted: Int,
        backgroundRunning: Int, backgroundDropped: Int, invalidationsRemembered: Int, writeBacks: Int, writeBackFailures: Int,
        watches: Int? = nil, watchEventsSent: Int? = nil, watchEventsDropped: Int? = nil, sharedChanges: Int? = nil,
        watchersClosed: Int? = nil, forbidden: Int? = nil, unauthorized: Int? = nil, lateHeartbeats: Int? = nil,
        hotTier: HotTier? = nil
    ) {
        self.version = version
        self.uptimeMs = uptimeMs
        self.pools = pools
        self.workers = workers
        self.domains = domains
        self.clients = clients
        self.requestsInFlight = requestsInFlight
        self.answersBySource = answersBySource
        self.failuresByCode = failuresByCode
        self.tripsStarted = tripsStarted
        self.tripsJoined = tripsJoined
        self.joinersAskedAlone = joinersAskedAlone
        self.waitingForWorkers = waitingForWorkers
        self.overloaded = overloaded
        self.connectionsRefused = connectionsRefused
        self.slowReadersClosed = slowReadersClosed
        self.idleClientsClosed = idleClientsClosed
        self.unresponsiveWorkers = unresponsiveWorkers
        self.draining = draining
        self.refreshesStarted = refreshesStarted
        self.backgroundRunning = backgroundRunning
        self.backgroundDropped = backgroundDropped
        self.invalidationsRemembered = invalidationsRemembered
        self.writeBacks = writeBacks
        self.writeBackFailures = writeBackFailures
        self.watches = watches
        self.watchEventsSent = watchEventsSent
        self.watchEventsDropped = watchEventsDropped
        self.watchersClosed = watchersClosed
        self.sharedChanges = sharedChanges
        self.forbidden = forbidden
        self.unauthorized = unauthorized
        self.lateHeartbeats = lateHeartbeats
        self.hotTier = hotTier
    }
}
