import MonarchLoop

extension MonarchClient {
    /// How a client behaves: its loop, heartbeats, reconnection and its own deadline.
    public struct Options: Sendable {
        /// The event loop the connection runs on; nil (the default) shares one loop, started
        /// on first use, among every client of the process.
        public var loop: EventLoop?
        /// The shared secret, where the coordinator's listener requires one.
        public var token: String?
        /// How long the coordinator has to answer the hello of a new connection; 5 s by default.
        public var connectTimeout: Duration
        /// How often to ping an idle coordinator; after three intervals without a word from it
        /// the connection is taken as dead and replaced. Nil sends no pings. 5 s by default.
        public var heartbeat: Duration?
        /// The first wait before reconnecting after the connection ends; doubled after each
        /// failed attempt up to ``maxReconnectDelay``. 50 ms by default.
        public var reconnectDelay: Duration
        /// The longest wait between reconnection attempts; 2 s by default.
        public var maxReconnectDelay: Duration
        /// How often an idempotent request is sent again after a lost connection; 3 by default.
        public var retries: Int
        /// The client's own limit for a request that sets no deadline (the coordinator applies
        /// the route's, which should be shorter); 30 s by default.
        public var deadline: Duration
        /// How much longer than a request's deadline the client waits for the coordinator's
        /// answer (which names what was tried) before giving up itself; 1 s by default.
        public var deadlineMargin: Duration

        /// Options with the defaults above, overridable by name.
        public init(
            loop: EventLoop? = nil, token: String? = nil, connectTimeout: Duration = .seconds(5),
            heartbeat: Duration? = .seconds(5),
            reconnectDelay: Duration = .milliseconds(50), maxReconnectDelay: Duration = .seconds(2), retries: Int = 3,
            deadline: Duration = .seconds(30), deadlineMargin: Duration = .seconds(1)
        ) {
            self.loop = loop
            self.token = token
            self.connectTimeout = connectTimeout
            self.heartbeat = heartbeat
            self.reconnectDelay = reconnectDelay
            self.maxReconnectDelay = maxReconnectDelay
            self.retries = retries
            self.deadline = deadline
            self.deadlineMargin = deadlineMargin
        }
    }
}
