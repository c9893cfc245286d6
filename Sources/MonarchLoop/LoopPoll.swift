import CLibUV

/// Watches a socket that something else owns (a C library's connection, such as libcurl's)
/// for readability and writability on an event loop, through `uv_poll_t`.
///
/// The poll never reads, writes or closes the socket: it only reports that the socket is
/// ready. Closing the poll stops watching at once (the socket may then be closed, and its
/// number reused by a new poll, before the close completes). One poll per socket at a time.
/// Loop thread only, except ``close()``.
public final class LoopPoll: LoopHandle, @unchecked Sendable {
    /// What a poll watches for, and what it reports.
    public struct Events: OptionSet, Sendable, Hashable {
        /// libuv's `uv_poll_event` bits.
        public let rawValue: Int32

        /// Creates a set of events from libuv's `uv_poll_event` bits.
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// The socket can be read without blocking (or has reached its end).
        public static let readable = Events(rawValue: Int32(UV_READABLE.rawValue))
        /// The socket can be written without blocking.
        public static let writable = Events(rawValue: Int32(UV_WRITABLE.rawValue))
    }

    /// The socket watched.
    public let socket: Int32
    private var action: (@Sendable (Result<Events, UVError>) -> Void)?

    /// Whether the poll is started: watching for some events. Loop thread only.
    public var isWatching: Bool { action != nil }

    /// What the poll watches for; empty when stopped. Loop thread only.
    public private(set) var watchedEvents: Events = []

    /// Creates a stopped poll for `socket`. Loop thread only.
    ///
    /// - Throws: ``UVError`` when libuv cannot watch the socket (`EEXIST` when another open
    ///   poll watches it already).
    public init(socket: Int32, on loop: EventLoop) throws(UVError) {
        self.socket = socket
        try super.init(loop: loop, size: MemoryLayout<uv_poll_t>.size) {
            uv_poll_init_socket(loop.uvLoop, $0.assumingMemoryBound(to: uv_poll_t.self), socket)
        }
    }

    /// Watches for `events` and calls `callback` on the loop thread each time some of them are
    /// ready, with the ready ones, or with the error libuv reports for the socket (which stops
    /// the poll). Replaces the events and the callback set before; replacing only the callback
    /// costs no system call. Starting with no events is ``stop()``.
    ///
    /// - Throws: ``UVError`` when libuv cannot start watching.
    public func start(events: Events, _ callback: @escaping @Sendable (Result<Events, UVError>) -> Void) throws(UVError) {
        loop.preconditionInEventLoop()
        guard !isClosing else { return }
        guard !events.isEmpty else {
            stop()
            return
        }
        let unchanged = isWatching && events == watchedEvents
        action = callback
        if unchanged { return }
        let started = uv_poll_start(pointer(as: uv_poll_t.self), events.rawValue) { poll, status, events in
            guard let owner = LoopHandle.owner(of: UnsafeMutableRawPointer(poll), as: LoopPoll.self),
                let action = owner.action
            else { return }
            if status < 0 {
                // libuv stopped the poll before reporting the error: starting it again must
                // register it again, even for the same events.
                owner.action = nil
                owner.watchedEvents = []
                action(.failure(UVError(code: status, operation: "poll socket \(owner.socket)")))
            } else {
                action(.success(Events(rawValue: events)))
            }
        }
        guard started >= 0 else {
            action = nil
            watchedEvents = []
            throw UVError(code: started, operation: "poll socket \(socket)")
        }
        watchedEvents = events
    }

    /// Stops watching; the poll may be started again.
    public func stop() {
        loop.preconditionInEventLoop()
        guard !isClosing else { return }
        uv_poll_stop(pointer(as: uv_poll_t.self))
        action = nil
        watchedEvents = []
    }

    override func willClose() {
        action = nil
        watchedEvents = []
        super.willClose()
    }

    override func didClose() {
        action = nil
        super.didClose()
    }
}
