import CCurl
import CCurlShim
import Logging
import MonarchLoop

#if canImport(Glibc)
import Glibc
#endif

/// libcurl's multi-socket interface driven by an event loop: one `CURLM` whose sockets are
/// watched by ``LoopPoll``s and whose timeouts run on one ``LoopTimer``, so hundreds of
/// exchanges share the loop's thread with no thread of their own.
///
/// The multi keeps libcurl's connection cache (and DNS cache) across exchanges, so later
/// exchanges with the same host reuse connections (and multiplex them over HTTP/2 where the
/// server offers it over TLS). Every libcurl call happens on the loop thread; ``fetch(_:)``
/// may be called from any task and costs no thread hop for a task already running on the loop.
///
/// Call ``close()`` before releasing the multi and before its loop shuts down.
public final class CurlMulti: @unchecked Sendable {
    /// Limits of the multi as a whole.
    public struct Options: Sendable, Hashable {
        /// Connections open to one host at most; further exchanges with it wait for one
        /// (HTTP/2 exchanges share a connection and rarely wait).
        public var maxHostConnections: Int
        /// Idle connections kept for reuse, at most.
        public var maxCachedConnections: Int
        /// Easy handles kept for reuse between exchanges, at most.
        public var maxIdleHandles: Int

        /// Creates options; the defaults suit a worker talking to a few upstream hosts.
        public init(maxHostConnections: Int = 64, maxCachedConnections: Int = 256, maxIdleHandles: Int = 128) {
            self.maxHostConnections = maxHostConnections
            self.maxCachedConnections = maxCachedConnections
            self.maxIdleHandles = maxIdleHandles
        }
    }

    /// The loop whose thread runs every libcurl call of this multi.
    public let loop: EventLoop
    /// The limits the multi was made with.
    public let options: Options
    private let logger: Logger
    /// The `CURLM *`; nil once closed.
    private var multi: UnsafeMutableRawPointer?
    private let timer: LoopTimer
    /// What the timer runs, made once.
    private var timerAction: (@Sendable () -> Void)?
    /// A poll per socket libcurl asked to watch, with its reports, started while it wants
    /// events, parked or stopped and kept (for the next socket with that number) after it no
    /// longer does.
    private var watches: [Int32: SocketWatch] = [:]
    /// Exchanges in progress, by easy handle, with their handles.
    private var transfers: [UnsafeMutableRawPointer: (transfer: CurlTransfer, handle: CurlHandle)] = [:]
    /// Handles ready for the next exchange: reset, or holding a plain GET's options (see
    /// ``CurlHandle``).
    private var idleHandles: [CurlHandle] = []
    /// The sockets whose polls are parked: registered, reporting to no one.
    private var parked: Set<Int32> = []
    /// The open sockets of libcurl's connections: made by ``openSocket(_:)`` and not closed by
    /// ``closeSocket(_:)`` yet. Only they may be parked; libcurl closes its other sockets (the
    /// threaded resolver's) itself.
    private var connectionSockets: Set<Int32> = []
    /// Whether libcurl's last timeout asked to be run at once.
    private var timeoutDueNow = false
    /// Whether a run of the timeout is queued on the loop.
    private var timeoutQueued = false

    /// Creates a multi on `loop`, initialising libcurl first if nothing has (see
    /// ``CurlLibrary/initialize()``). Loop thread only.
    ///
    /// - Throws: ``CurlMultiError`` when libcurl or libuv cannot provide the multi or its timer.
    public init(on loop: EventLoop, options: Options = Options(), logger: Logger = Logger(label: "monarch.curl"))
        throws(CurlMultiError)
    {
        loop.preconditionInEventLoop()
        CurlLibrary.initialize()
        self.loop = loop
        self.options = options
        self.logger = logger
        do {
            timer = try LoopTimer(on: loop)
        } catch {
            throw CurlMultiError(message: "cannot create the multi's timer: \(error)")
        }
        guard let multi = curl_multi_init() else {
            timer.close()
            throw CurlMultiError(message: "curl_multi_init failed")
        }
        self.multi = multi
        let this = Unmanaged.passUnretained(self).toOpaque()
        monarch_curl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, this)
        monarch_curl_multi_setopt_socket_callback(multi) { _, socket, what, data, _ in
            Unmanaged<CurlMulti>.fromOpaque(data!).takeUnretainedValue().watch(socket, what)
        }
        monarch_curl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, this)
        monarch_curl_multi_setopt_timer_callback(multi) { _, timeoutMs, data in
            Unmanaged<CurlMulti>.fromOpaque(data!).takeUnretainedValue().schedule(afterMs: timeoutMs)
        }
        monarch_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, options.maxHostConnections)
        monarch_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, options.maxCachedConnections)
        monarch_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        timerAction = { [unowned self] in act(on: CurlMulti.timeoutSocket, events: 0) }
    }

    /// Exchanges in progress. Loop thread only.
    public var activeTransfers: Int {
        loop.preconditionInEventLoop()
        return transfers.count
    }

    /// Polls made so far: one per socket number libcurl asked to watch, kept across the
    /// transfers of a kept-alive connection. Loop thread only.
    public private(set) var pollsMade = 0

    /// Easy handles made so far: exchanges one after another reuse one handle. Loop thread only.
    public private(set) var handlesMade = 0

    /// Sockets being watched for libcurl. Loop thread only.
    public var watchedSockets: Int {
        loop.preconditionInEventLoop()
        return watches.values.count(where: \.poll.isWatching) - parked.count
    }

    /// Sockets of kept-alive connections between transfers whose polls stay registered with
    /// the loop (see ``park(_:)``). Loop thread only.
    public var parkedSockets: Int {
        loop.preconditionInEventLoop()
        return parked.count
    }

    /// Performs one exchange and returns how it ended; never throws.
    ///
    /// Cancelling the calling task removes the exchange from the multi at once (its
    /// connection is closed, as libcurl cannot reuse a connection in the middle of an answer)
    /// and returns a ``FetchFailure/Kind-swift.enum/cancelled`` failure. A task running on the
    /// loop thread starts the exchange at once and is resumed on the loop, with no thread hop;
    /// a caller elsewhere hands the start to the loop, and gets a
    /// ``FetchFailure/Kind-swift.enum/cancelled`` failure at once when the loop has begun to
    /// shut down and no longer takes it.
    public func fetch(_ spec: FetchSpec) async -> FetchResult {
        if Task.isCancelled { return .failed(Self.cancelled) }
        let transfer = CurlTransfer(spec: spec)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.onEnd { continuation.resume(returning: $0) }
                if loop.inEventLoop {
                    start(transfer)
                } else {
                    // `submit`, unlike `execute`, reports a loop that no longer takes work
                    // (its shutdown began): the start never runs, so the caller is answered
                    // here. It is awaited off the loop, which may be the one refusing work.
                    Task(executorPreference: globalConcurrentExecutor) { [loop] in
                        do {
                            try await loop.submit { self.start(transfer) }
                        } catch {
                            continuation.resume(returning: .failed(Self.loopShutDown))
                        }
                    }
                }
            }
        } onCancel: { [loop] in
            // Even on the loop thread this runs later, never inside a libcurl callback; a
            // cancel that overtakes the start is remembered by the transfer.
            loop.execute { self.cancel(transfer) }
        }
    }

    /// An exchange to start with ``startExchange(_:)``, whose `completion` gets how it ended,
    /// once, on the loop thread, never from inside a libcurl call (at once, inside
    /// ``startExchange(_:)``, when it cannot start). Made apart from its start so that the
    /// caller can record it before a completion that runs at once.
    func exchange(_ spec: FetchSpec, completion: @escaping (FetchResult) -> Void) -> CurlTransfer {
        let transfer = CurlTransfer(spec: spec)
        transfer.onEnd(completion)
        return transfer
    }

    /// Starts an exchange made by ``exchange(_:completion:)``, with no task. Loop thread only.
    func startExchange(_ transfer: CurlTransfer) {
        loop.preconditionInEventLoop()
        start(transfer)
    }

    /// Ends `transfer` cancelled, if it has not ended: it is removed from the multi at once (its
    /// connection closed) and its completion gets a ``FetchFailure/Kind-swift.enum/cancelled``
    /// failure. Loop thread only.
    func cancelExchange(_ transfer: CurlTransfer) {
        loop.preconditionInEventLoop()
        cancel(transfer)
    }

    /// Closes the multi: every exchange in progress ends cancelled, every connection is
    /// closed, and the timer and the socket watchers close; returns once they have. Later
    /// fetches end cancelled at once. Idempotent; callable from any task.
    public func close() async {
        guard let handles = try? await loop.submit({ self.closeOnLoop() }) else { return }
        for handle in handles { await handle.closeAndWait() }
    }

    private func closeOnLoop() -> [LoopHandle] {
        loop.preconditionInEventLoop()
        guard let multi else { return [timer] }
        let running = transfers
        transfers = [:]
        for (pointer, running) in running {
            curl_multi_remove_handle(multi, pointer)
            running.handle.cleanup()
            running.transfer.resume(.failed(FetchFailure(kind: .cancelled, message: "the fetcher closed")))
        }
        // Closes the cached connections, telling the socket callback to stop watching them.
        self.multi = nil
        curl_multi_cleanup(multi)
        for handle in idleHandles { handle.cleanup() }
        idleHandles = []
        let handles: [LoopHandle] = watches.values.map(\.poll) + [timer]
        watches = [:]
        parked = []
        connectionSockets = []
        timerAction = nil
        for handle in handles { handle.close() }
        return handles
    }

    // MARK: - Exchanges

    private static let cancelled = FetchFailure(kind: .cancelled, message: "the request was cancelled")
    private static let loopShutDown = FetchFailure(kind: .cancelled, message: "the fetcher's loop has shut down")
    /// `CURL_SOCKET_TIMEOUT`: "no socket, the timer fired".
    private static let timeoutSocket: Int32 = -1

    private func start(_ transfer: CurlTransfer) {
        guard let multi else {
            transfer.resume(.failed(FetchFailure(kind: .cancelled, message: "the fetcher is closed")))
            return
        }
        guard !transfer.cancelledEarly else {
            transfer.resume(.failed(Self.cancelled))
            return
        }
        guard let handle = idleHandles.popLast() ?? makeHandle() else {
            transfer.resume(.failed(FetchFailure(kind: .other, message: "curl_easy_init failed")))
            return
        }
        let pointer = handle.easy.pointer
        do {
            // The sockets a connection opens for this exchange keep these callbacks for life; a
            // handle that kept its options keeps them too.
            if try transfer.configure(handle) {
                try handle.easy.setSocketCallbacks(
                    open: { data, _, address in
                        Unmanaged<CurlMulti>.fromOpaque(data!).takeUnretainedValue().openSocket(address)
                    },
                    close: { data, socket in
                        Unmanaged<CurlMulti>.fromOpaque(data!).takeUnretainedValue().closeSocket(socket)
                    },
                    data: Unmanaged.passUnretained(self).toOpaque())
            }
        } catch {
            handle.options = .other
            recycle(handle)
            transfer.resume(.failed(FetchFailure(kind: .other, curlCode: Int32(bitPattern: error.code.rawValue), message: "\(error)")))
            return
        }
        transfers[pointer] = (transfer, handle)
        transfer.state = .running(handle)
        let code = curl_multi_add_handle(multi, pointer)
        guard code == CURLM_OK else {
            transfers[pointer] = nil
            recycle(handle)
            transfer.resume(.failed(FetchFailure(
                kind: .other, message: "curl_multi_add_handle failed: \(String(cString: curl_multi_strerror(code)))")))
            return
        }
    }

    private func makeHandle() -> CurlHandle? {
        guard let handle = CurlHandle() else { return nil }
        handlesMade += 1
        return handle
    }

    private func cancel(_ transfer: CurlTransfer) {
        switch transfer.state {
        case .pending:
            transfer.cancelledEarly = true
        case .running(let handle):
            transfers[handle.easy.pointer] = nil
            if let multi { curl_multi_remove_handle(multi, handle.easy.pointer) }
            recycle(handle)
            transfer.resume(.failed(Self.cancelled))
        case .finished:
            break
        }
    }

    /// Collects the exchanges libcurl has finished and answers their callers.
    private func collectFinished() {
        guard let multi else { return }
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let pointer = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            guard let (transfer, handle) = transfers.removeValue(forKey: pointer) else { continue }
            curl_multi_remove_handle(multi, pointer)
            let result = transfer.result(code: code, handle: handle)
            recycle(handle)
            transfer.resume(result)
        }
    }

    /// Keeps a handle no longer in the multi for reuse, or frees it. A handle holding a plain
    /// GET's options keeps them for the next plain GET; any other is reset first.
    private func recycle(_ handle: CurlHandle) {
        if idleHandles.count < options.maxIdleHandles, multi != nil {
            if case .plainGet = handle.options {} else { handle.reset() }
            idleHandles.append(handle)
        } else {
            handle.cleanup()
        }
    }

    // MARK: - libcurl's socket and timer callbacks

    /// CURLMOPT_SOCKETFUNCTION: watch `socket` for what libcurl wants, or stop watching it.
    ///
    /// A poll is kept per descriptor number, not closed and made again, for the next transfer
    /// of a kept-alive connection or the next socket given that number. Watching a socket for
    /// what its poll watches already costs no system call.
    private func watch(_ socket: Int32, _ what: Int32) -> Int32 {
        if what == CURL_POLL_REMOVE {
            park(socket)
            return 0
        }
        parked.remove(socket)
        var events: LoopPoll.Events = []
        if what & CURL_POLL_IN != 0 { events.insert(.readable) }
        if what & CURL_POLL_OUT != 0 { events.insert(.writable) }
        do {
            let entry: SocketWatch
            if let existing = watches[socket] {
                entry = existing
            } else {
                entry = watching(try LoopPoll(socket: socket, on: loop))
                watches[socket] = entry
                pollsMade += 1
            }
            try entry.poll.start(events: events, entry.toLibcurl)
            return 0
        } catch {
            logger.error("cannot watch socket \(socket): \(error)")
            watches.removeValue(forKey: socket)?.poll.close()
            return -1
        }
    }

    /// A socket's poll and what its reports are for: libcurl, or the end of a parked socket's
    /// wait. The reports are made once for the life of the poll rather than at each start.
    private struct SocketWatch {
        let poll: LoopPoll
        let toLibcurl: @Sendable (Result<LoopPoll.Events, UVError>) -> Void
        let endParking: @Sendable (Result<LoopPoll.Events, UVError>) -> Void
    }

    /// The watch of a new poll.
    private func watching(_ poll: LoopPoll) -> SocketWatch {
        let socket = poll.socket
        return SocketWatch(
            poll: poll,
            toLibcurl: { [unowned self] ready in
                var flags: Int32 = 0
                switch ready {
                case .success(let events):
                    if events.contains(.readable) { flags |= CURL_CSELECT_IN }
                    if events.contains(.writable) { flags |= CURL_CSELECT_OUT }
                case .failure:
                    flags = CURL_CSELECT_ERR
                }
                act(on: socket, events: flags)
            },
            endParking: { [unowned self, unowned poll] _ in
                poll.stop()
                parked.remove(socket)
            })
    }

    /// Stops reporting `socket`, which libcurl no longer watches.
    ///
    /// libcurl stops watching a kept-alive connection's socket after each of its transfers,
    /// and watches it for reading again at the start of the next. A poll watching for reading
    /// only stays registered with the loop meanwhile, its reports going nowhere, so that both
    /// cost no system call; should the socket become readable in between (the server closed
    /// the connection), the poll stops then. Any other poll stops at once, and so does the poll
    /// of any socket that is not a connection's (the resolver's, which libcurl closes without
    /// telling): a parked socket must never be closed under its poll, and libcurl closes its
    /// connections' sockets with ``closeSocket(_:)``.
    private func park(_ socket: Int32) {
        guard let entry = watches[socket], entry.poll.isWatching else { return }
        guard entry.poll.watchedEvents == .readable, connectionSockets.contains(socket) else {
            entry.poll.stop()
            return
        }
        parked.insert(socket)
        try? entry.poll.start(events: .readable, entry.endParking)
    }

    /// CURLOPT_OPENSOCKETFUNCTION: opens a socket for a connection, as libcurl would, and notes
    /// it as one whose poll may be parked. `CURL_SOCKET_BAD` when the system refuses (libcurl
    /// reports the failure with `errno`).
    private func openSocket(_ address: UnsafeMutablePointer<curl_sockaddr>?) -> curl_socket_t {
        guard let address else { return CURL_SOCKET_BAD }
        let socket = Glibc.socket(
            address.pointee.family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.protocol)
        guard socket >= 0 else { return CURL_SOCKET_BAD }
        connectionSockets.insert(socket)
        return socket
    }

    /// CURLOPT_CLOSESOCKETFUNCTION: stops watching `socket`, then closes it.
    private func closeSocket(_ socket: Int32) -> Int32 {
        watches[socket]?.poll.stop()
        parked.remove(socket)
        connectionSockets.remove(socket)
        return Glibc.close(socket)
    }

    /// CURLMOPT_TIMERFUNCTION: run libcurl's timeouts after `timeoutMs` (-1: no timer).
    ///
    /// libcurl must not be called from its callback, so even a timeout of zero runs later:
    /// before the loop next waits, in the same pass.
    private func schedule(afterMs timeoutMs: Int) -> Int32 {
        guard multi != nil else { return 0 }
        timeoutDueNow = timeoutMs == 0
        if timeoutMs < 0 {
            timer.stop()
        } else if timeoutMs == 0 {
            timer.stop()
            guard !timeoutQueued else { return 0 }
            timeoutQueued = true
            loop.execute {
                self.timeoutQueued = false
                guard self.timeoutDueNow else { return }
                self.timeoutDueNow = false
                self.act(on: CurlMulti.timeoutSocket, events: 0)
            }
        } else if let timerAction {
            timer.start(afterMs: UInt64(timeoutMs), timerAction)
        }
        return 0
    }

    /// Tells libcurl that `socket` is ready (or its timer fired) and answers what finished.
    private func act(on socket: Int32, events: Int32) {
        guard let multi else { return }
        var running: Int32 = 0
        let code = curl_multi_socket_action(multi, socket, events, &running)
        if code != CURLM_OK {
            logger.error("curl_multi_socket_action failed: \(String(cString: curl_multi_strerror(code)))")
        }
        collectFinished()
    }
}

/// The multi could not be created.
public struct CurlMultiError: Error, Sendable, CustomStringConvertible {
    /// What failed.
    public let message: String
    public var description: String { message }
}
