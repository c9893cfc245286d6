import CHiredis
import CRedisShim
import DequeModule
import Logging
import MonarchLoop

#if canImport(Glibc)
import Glibc
#endif

/// One connection to Redis through hiredis's asynchronous API, driven by an ``EventLoop``
/// through hiredis's libuv adapter, that comes back by itself.
///
/// - **Reconnects with back-off.** A connection that fails, closes or stops answering is
///   dropped and tried again after `backoff` (doubling from ``RedisSettings/backoffMinMs`` to
///   ``RedisSettings/backoffMaxMs``, reset once connected). The hiredis adapter that Debian
///   ships (0.14) does not report a refused connect, so an attempt also ends after
///   ``RedisSettings/timeoutMs``.
/// - **Never waits for Redis.** ``send(_:completion:)`` refuses at once (returns false) while
///   the connection is down or ``RedisSettings/maxPending`` commands await replies. A command
///   not answered within ``RedisSettings/timeoutMs`` drops the connection: its commands and
///   every one after it complete with nil. An idle command connection is pinged every
///   ``RedisSettings/timeoutMs`` so that a silent Redis is noticed too. A subscribed one is
///   not (hiredis 0.14 does not hand a subscribed connection's `PING` reply to its callback);
///   its owner drops it when the command connection to the same Redis is lost.
/// - **Backs off a slow Redis** (``RedisSlowGuard``): after ``RedisSettings/slowLimit`` slow
///   replies or timeouts in a row, commands are refused at once for a back-off, then one probes.
/// - **Commands in argv form** (`redisAsyncCommandArgv`): binary-safe, nothing formatted.
///
/// Loop thread only (it is `Sendable` so that it can be created from a task and then used on
/// its loop).
final class RedisConnection: @unchecked Sendable {
    /// Where the connection is.
    enum Phase: String {
        case connecting, connected, reconnecting, closed
    }

    let loop: EventLoop
    let address: RedisAddress
    /// What it is for, in logs: `commands` or `notifications`.
    let role: String
    private let password: String?
    private let settings: RedisSettings
    private let logger: Logger
    private let selectsDatabase: Bool
    private let pingsWhenIdle: Bool

    private(set) var phase = Phase.connecting {
        didSet { if phase != oldValue { onPhaseChange?() } }
    }
    /// Times the connection came back after it was lost.
    private(set) var reconnects = 0
    /// Why the connection is down, for the misses and dropped writes it causes.
    private(set) var downReason = "not connected yet"
    private var context: UnsafeMutablePointer<redisAsyncContext>?
    private var ready = false
    private var everConnected = false
    private var pending = Deque<RedisCommand>()
    private var retryTimer: LoopTimer?
    private var watchdog: LoopTimer?
    private var backoffMs: UInt64
    private var lastSentMs: UInt64 = 0
    /// Backs off a Redis that answers too slowly.
    private var slowGuard: RedisSlowGuard

    /// Called when ``phase`` changes.
    var onPhaseChange: (() -> Void)?
    /// Called once connected (the handshake is queued, commands may be sent).
    var onConnected: (() -> Void)?
    /// Called when a connection that was up is lost.
    var onLost: (() -> Void)?
    /// Called for each message pushed on a subscription.
    var onPush: ((RedisReply) -> Void)?

    /// A connection to `address` for commands, or (`forSubscriptions`) for a subscription:
    /// that one sends no `SELECT` (channels are shared by every database) and no idle `PING`.
    /// Call ``start()`` on the loop.
    init(
        address: RedisAddress, password: String?, role: String, forSubscriptions: Bool, settings: RedisSettings,
        loop: EventLoop, logger: Logger
    ) {
        self.address = address
        self.password = password
        self.role = role
        self.selectsDatabase = !forSubscriptions
        self.pingsWhenIdle = !forSubscriptions
        self.settings = settings
        self.loop = loop
        self.logger = logger
        self.backoffMs = settings.backoffMinMs
        self.slowGuard = RedisSlowGuard(settings: settings)
    }

    /// Starts connecting. Loop thread only.
    func start() throws(UVError) {
        loop.preconditionInEventLoop()
        retryTimer = try LoopTimer(on: loop)
        let watchdog = try LoopTimer(on: loop)
        self.watchdog = watchdog
        let interval = max(10, settings.timeoutMs / 4)
        watchdog.start(afterMs: interval, repeatMs: interval) { [weak self] in self?.check() }
        connect()
    }

    /// Whether commands may be sent now.
    var isReady: Bool { ready }

    /// Commands sent and not yet answered.
    var pendingCount: Int { pending.count }

    /// Whether Redis is backed off now as too slow (see ``RedisSlowGuard``).
    var isBackedOff: Bool { slowGuard.isBackedOff(at: Self.nowMs()) }

    /// Times Redis was backed off as too slow.
    var slowBackoffs: Int { slowGuard.backoffs }

    /// Why a command cannot be sent now, for the miss or dropped write it becomes.
    var unavailableReason: String {
        let now = Self.nowMs()
        if ready, slowGuard.isBackedOff(at: now) {
            let remaining = slowGuard.remainingMs(at: now)
            return "the Redis store at \(address) is too slow (replies of \(settings.slowMs) ms or more in a row); "
                + (remaining > 0 ? "backed off for \(remaining) ms more" : "probing it")
        }
        if ready && pending.count >= settings.maxPending {
            return "the Redis store at \(address) has \(pending.count) commands waiting (the limit)"
        }
        return "the Redis store at \(address) is unreachable (\(downReason)); reconnecting"
    }

    /// Sends a command; `completion` gets its reply, or nil when the connection was lost or
    /// dropped before it came. Returns false, without calling `completion`, when the command
    /// cannot be sent now (see ``unavailableReason``), also while Redis is backed off as too
    /// slow (``RedisSlowGuard``). `beyondLimit`: sent even when ``RedisSettings/maxPending``
    /// commands wait or Redis is backed off (for the handshake, and for what must follow a
    /// command just answered, such as the note of a change, so at most one per command).
    @discardableResult
    func send(_ arguments: [[UInt8]], beyondLimit: Bool = false, completion: @escaping (RedisReply?) -> Void) -> Bool {
        loop.preconditionInEventLoop()
        guard ready, let context, beyondLimit || pending.count < settings.maxPending else { return false }
        let sentMs = Self.nowMs()
        guard beyondLimit || slowGuard.admits(at: sentMs) else { return false }
        let command = RedisCommand(deadlineMs: sentMs + settings.timeoutMs) { [weak self] reply in
            if reply != nil { self?.noteReply(after: Self.nowMs() &- sentMs) }
            completion(reply)
        }
        let opaque = Unmanaged.passRetained(command).toOpaque()
        let status = Self.withArgv(arguments) { argc, argv, lengths in
            redisAsyncCommandArgv(context, { context, reply, privateData in
                guard let privateData else { return }
                let command = Unmanaged<RedisCommand>.fromOpaque(privateData).takeRetainedValue()
                // No longer waiting by the time its completion runs, which may send more.
                let completion = command.takeCompletion()
                RedisConnection.owner(of: context.map { UnsafePointer($0) })?.reap()
                completion?(reply.map { RedisReply($0.assumingMemoryBound(to: redisReply.self)) })
            }, opaque, argc, argv, lengths)
        }
        guard status == REDIS_OK else {
            Unmanaged<RedisCommand>.fromOpaque(opaque).release()
            return false
        }
        pending.append(command)
        lastSentMs = Self.nowMs()
        return true
    }

    /// Subscribes to `channel`: each message comes to ``onPush``. Returns false when not
    /// connected.
    @discardableResult
    func subscribe(_ channel: String) -> Bool {
        loop.preconditionInEventLoop()
        guard ready, let context else { return false }
        let status = Self.withArgv([Array("SUBSCRIBE".utf8), Array(channel.utf8)]) { argc, argv, lengths in
            redisAsyncCommandArgv(context, { context, reply, _ in
                guard let reply, let owner = RedisConnection.owner(of: context.map { UnsafePointer($0) }) else { return }
                owner.onPush?(RedisReply(reply.assumingMemoryBound(to: redisReply.self)))
            }, nil, argc, argv, lengths)
        }
        return status == REDIS_OK
    }

    /// Drops the connection now (its commands complete with nil) and tries again after the
    /// back-off. Not from inside a hiredis callback.
    func drop(because reason: String) {
        loop.preconditionInEventLoop()
        guard let context else { return }
        logger.warning("Redis \(role) connection to \(address) dropped: \(reason)")
        downReason = reason
        ready = false
        redisAsyncFree(context)
        // A connection that was up reports its end through the disconnect callback; one that
        // was still connecting does not.
        if self.context != nil {
            self.context = nil
            lost(reason)
        }
    }

    /// Closes the connection for good; its commands complete with nil, and its callbacks
    /// are let go. Loop thread only.
    func close() {
        loop.preconditionInEventLoop()
        guard phase != .closed else { return }
        phase = .closed
        ready = false
        retryTimer?.close()
        watchdog?.close()
        if let context {
            self.context = nil
            redisAsyncFree(context)
        }
        pending.removeAll()
        onPhaseChange = nil
        onConnected = nil
        onLost = nil
        onPush = nil
    }

    // MARK: - Connecting

    private func connect() {
        guard phase != .closed else { return }
        let host = address.host
        if RedisHost.isNumericAddress(host) {
            connect(to: host)
            return
        }
        // getaddrinfo blocks: it runs on the loop's thread pool, never on the loop thread.
        Task {
            let resolved = try? await loop.runOnThreadPool { RedisHost.resolve(host) }
            loop.execute {
                guard self.phase != .closed else { return }
                switch resolved {
                case .success(let ip)?: self.connect(to: ip)
                case .failure(let reason)?: self.lost("cannot resolve \(host): \(reason.message)")
                case nil: self.lost("cannot resolve \(host): the loop is shutting down")
                }
            }
        }
    }

    private func connect(to ip: String) {
        guard let context = redisAsyncConnect(ip, Int32(address.port)) else {
            lost("hiredis could not allocate a connection")
            return
        }
        if context.pointee.err != 0 {
            let reason = Self.errorText(context)
            redisAsyncFree(context)
            lost(reason)
            return
        }
        context.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        guard monarch_redis_attach_libuv(context, loop.uvLoopPointer) == REDIS_OK else {
            redisAsyncFree(context)
            lost("cannot attach hiredis to the event loop")
            return
        }
        redisAsyncSetConnectCallback(context) { context, status in
            RedisConnection.owner(of: context)?.connected(status: status)
        }
        redisAsyncSetDisconnectCallback(context) { context, status in
            RedisConnection.owner(of: context)?.disconnected(status: status)
        }
        self.context = context
        let timeoutMs = settings.timeoutMs
        retryTimer?.start(afterMs: timeoutMs) { [weak self] in self?.drop(because: "no connection within \(timeoutMs) ms") }
    }

    private func connected(status: Int32) {
        retryTimer?.stop()
        guard status == REDIS_OK else {
            // hiredis frees the context after this callback.
            let reason = context.map(Self.errorText) ?? "connect failed"
            context = nil
            lost(reason)
            return
        }
        if everConnected { reconnects += 1 }
        everConnected = true
        ready = true
        backoffMs = settings.backoffMinMs
        phase = .connected
        logger.info("Redis \(role) connection to \(address) is up")
        if let password {
            send([Array("AUTH".utf8), Array(password.utf8)], beyondLimit: true) { [weak self] reply in
                self?.checkHandshake(reply, "AUTH")
            }
        }
        if selectsDatabase && address.database != 0 {
            let database = address.database
            send([Array("SELECT".utf8), Array(String(database).utf8)], beyondLimit: true) { [weak self] reply in
                self?.checkHandshake(reply, "SELECT \(database)")
            }
        }
        onConnected?()
    }

    private func checkHandshake(_ reply: RedisReply?, _ command: String) {
        guard case .error(let message)? = reply else { return }
        logger.error("Redis at \(address) refused \(command): \(message)")
        // Not from inside the reply callback.
        loop.execute { self.drop(because: "\(command) refused: \(message)") }
    }

    private func disconnected(status: Int32) {
        // hiredis frees the context after this callback.
        let reason = context.map(Self.errorText) ?? "closed"
        context = nil
        guard phase != .closed else { return }
        lost(status == REDIS_OK ? "closed" : reason)
    }

    private func lost(_ reason: String) {
        let wasUp = ready || phase == .connected
        ready = false
        slowGuard.connectionLost()
        downReason = reason
        pending.removeAll()
        guard phase != .closed else { return }
        if wasUp {
            logger.warning("Redis \(role) connection to \(address) lost (\(reason)); reconnecting")
            onLost?()
        } else {
            logger.debug("Redis \(role) connection to \(address) failed (\(reason)); trying again in \(backoffMs) ms")
        }
        phase = everConnected ? .reconnecting : .connecting
        let delay = backoffMs
        backoffMs = min(settings.backoffMaxMs, backoffMs * 2)
        retryTimer?.start(afterMs: delay) { [weak self] in self?.connect() }
    }

    // MARK: - Watching

    /// Notes how long a reply took, backing Redis off when it has been slow too often.
    private func noteReply(after elapsedMs: UInt64) {
        let wasBackedOff = slowGuard.backedOffUntilMs != nil
        let now = Self.nowMs()
        if slowGuard.noteReply(after: elapsedMs, at: now) {
            backedOff(now: now, why: "a reply took \(elapsedMs) ms")
        } else if wasBackedOff, slowGuard.backedOffUntilMs == nil {
            logger.info("Redis at \(address) answers in time again (\(elapsedMs) ms); no longer backed off")
            onPhaseChange?()
        }
    }

    private func backedOff(now: UInt64, why: String) {
        logger.warning(
            "Redis at \(address) is too slow (\(why); \(slowGuard.strikes) slow in a row): backed off for \(slowGuard.remainingMs(at: now)) ms, lookups miss and writes are dropped at once meanwhile")
        onPhaseChange?()
    }

    /// Forgets answered commands at the head of the queue.
    private func reap() {
        while let first = pending.first, first.isFinished { pending.removeFirst() }
    }

    /// Drops a connection whose oldest command is overdue; pings an idle one.
    private func check() {
        let now = Self.nowMs()
        reap()
        if let first = pending.first, now >= first.deadlineMs {
            if slowGuard.noteTimeout(at: now) { backedOff(now: now, why: "a command timed out") }
            drop(because: "no answer within \(settings.timeoutMs) ms")
        } else if pingsWhenIdle, ready, pending.isEmpty, now >= lastSentMs + settings.timeoutMs {
            send([Array("PING".utf8)]) { _ in }
        }
    }

    // MARK: - Helpers

    private static func owner(of context: UnsafePointer<redisAsyncContext>?) -> RedisConnection? {
        guard let data = context?.pointee.data else { return nil }
        return Unmanaged<RedisConnection>.fromOpaque(data).takeUnretainedValue()
    }

    private static func errorText(_ context: UnsafeMutablePointer<redisAsyncContext>) -> String {
        guard let text = context.pointee.errstr else { return "error \(context.pointee.err)" }
        return String(cString: text)
    }

    private static func withArgv(
        _ arguments: [[UInt8]],
        _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> Int32
    ) -> Int32 {
        let total = arguments.reduce(0) { $0 + $1.count }
        let storage = UnsafeMutablePointer<CChar>.allocate(capacity: max(1, total))
        defer { storage.deallocate() }
        let pointers = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: arguments.count)
        defer { pointers.deallocate() }
        var lengths = [Int]()
        lengths.reserveCapacity(arguments.count)
        var offset = 0
        for (index, argument) in arguments.enumerated() {
            argument.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress {
                    UnsafeMutableRawPointer(storage + offset).copyMemory(from: base, byteCount: bytes.count)
                }
            }
            pointers[index] = UnsafePointer(storage + offset)
            lengths.append(argument.count)
            offset += argument.count
        }
        return lengths.withUnsafeBufferPointer { body(Int32(arguments.count), pointers, $0.baseAddress!) }
    }

    static func nowMs() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1000 + UInt64(time.tv_nsec) / 1_000_000
    }
}

/// A command awaiting its reply.
private final class RedisCommand {
    let deadlineMs: UInt64
    private var completion: ((RedisReply?) -> Void)?

    init(deadlineMs: UInt64, completion: @escaping (RedisReply?) -> Void) {
        self.deadlineMs = deadlineMs
        self.completion = completion
    }

    var isFinished: Bool { completion == nil }

    func finish(_ reply: RedisReply?) {
        takeCompletion()?(reply)
    }

    /// The completion, which the command no longer holds: it counts as finished from now.
    func takeCompletion() -> ((RedisReply?) -> Void)? {
        defer { completion = nil }
        return completion
    }
}
