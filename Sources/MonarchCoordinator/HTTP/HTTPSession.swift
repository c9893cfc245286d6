import MonarchConfig
import MonarchHTTP
import MonarchLoop
import MonarchWire

/// One HTTP/1.1 connection of the front door: it reads requests strictly
/// (``HTTPRequestParser``), answers them in order through the coordinator's chain (pipelined
/// ones one after another), and keeps to the `limits.http*` bounds: a head within
/// `httpHeaderTimeout` (else 408), an idle connection closed after `httpKeepAlive`, at most
/// `httpRequests` requests and `httpConnectionAge` per connection, the requests in flight of
/// `limits.inFlight` (else 503 with `Retry-After`). While a request is answered, or its answer
/// waits for a slow reader, nothing more is read from the connection.
///
/// An actor isolated to the coordinator's loop: libuv's callbacks, which run there, enter
/// through `assumeIsolated`.
actor HTTPSession {
    nonisolated let loop: EventLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
    /// The session's number among the coordinator's clients.
    nonisolated let id: Int
    private let connection: StreamConnection
    private let coordinator: Coordinator
    private let limits: Configuration.Limits
    private let parser: HTTPRequestParser
    private let onClose: @Sendable (Int) -> Void
    private var timer: LoopTimer?
    /// The coordinator's waiter of the request being answered.
    private var waiter: Int?
    private var answering = false
    private var served = 0
    private let openedAt = ContinuousClock.now
    private var lastActivity = ContinuousClock.now
    /// When the first byte of the request now arriving came.
    private var requestStartedAt: ContinuousClock.Instant?
    private var continueSent = false
    /// Whether nothing more is answered (the connection closes or closed).
    private var ended = false
    /// Whether ``end()`` has run.
    private var cleanedUp = false

    /// A session on `connection`, answering through `coordinator`; `onClose` runs once when it ends.
    init(
        id: Int, connection: StreamConnection, coordinator: Coordinator, limits: Configuration.Limits,
        onClose: @escaping @Sendable (Int) -> Void
    ) {
        self.id = id
        self.loop = coordinator.loop
        self.connection = connection
        self.coordinator = coordinator
        self.limits = limits
        var httpLimits = HTTPLimits()
        httpLimits.requestLineBytes = limits.httpRequestLineBytes
        httpLimits.headerBlockBytes = limits.httpHeaderBlockBytes
        httpLimits.headerCount = limits.httpHeaders
        httpLimits.bodyBytes = limits.httpBodyBytes
        parser = HTTPRequestParser(limits: httpLimits)
        self.onClose = onClose
    }

    /// Starts reading, and the timer that enforces the time limits.
    func start() {
        connection.onRead = { [unowned self] bytes in
            let copy = Array(bytes)
            assumeIsolated { $0.received(copy) }
        }
        connection.onEnd = { [unowned self] _ in assumeIsolated { $0.end() } }
        connection.onWritabilityChanged = { [unowned self] writable in
            if writable { assumeIsolated { $0.answerNext() } }
        }
        timer = try? LoopTimer(on: loop)
        timer?.start(afterMs: 1000, repeatMs: 1000) { [unowned self] in assumeIsolated { $0.tick() } }
        connection.startReading()
    }

    /// Closes the connection now (the coordinator stops).
    func close() {
        connection.close()
        end()
    }

    private func received(_ bytes: [UInt8]) {
        let now = ContinuousClock.now
        if requestStartedAt == nil { requestStartedAt = now }
        lastActivity = now
        parser.append(bytes)
        answerNext()
    }

    /// Answers the next request that has arrived whole, unless one is being answered or the
    /// last answer still waits for the client to read it.
    private func answerNext() {
        guard !ended, !answering, connection.isWritable else { return }
        switch parser.next() {
        case nil:
            if parser.isReadingBody, parser.expectsContinue, !continueSent {
                continueSent = true
                connection.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
            }
        case .failure(let error):
            finish(HTTPExchange.plain(error.status, error.reason, closing: true), closing: true)
        case .success(let request):
            continueSent = false
            requestStartedAt = parser.bufferedBytes > 0 ? .now : nil
            answer(request)
        }
    }

    private func answer(_ request: HTTPRequest) {
        served += 1
        guard WireProtocol.isValidMethod(request.method) else {
            // The chain speaks methods of uppercase letters only (no M-SEARCH, no lowercase).
            finish(HTTPExchange.plain(501, "the method \(request.method) is not implemented", closing: !request.keepAlive), closing: !request.keepAlive)
            return
        }
        guard coordinator.admitExchange() else {
            finish(HTTPExchange.plain(
                503, "the coordinator has \(limits.inFlight) requests in flight (limits.inFlight); try again later",
                code: "overloaded", closing: true, extra: [HTTPHeader(name: "Retry-After", value: "1")]), closing: true)
            return
        }
        answering = true
        connection.stopReading()
        let closing = !request.keepAlive || served >= limits.httpRequests || ContinuousClock.now - openedAt >= limits.httpConnectionAge
        let method = request.method
        let message = HTTPExchange.message(for: request, id: MessageID(served))
        let serial = served
        let waiter = coordinator.answer(message, for: id) { [self] answer in
            assumeIsolated { $0.answered(answer, method: method, closing: closing) }
        }
        // An answer given at once (a refusal, a hot hit) may have moved on to the next request.
        if answering && served == serial { self.waiter = waiter }
    }

    private func answered(_ answer: ClientAnswer, method: String, closing: Bool) {
        coordinator.exchangeFinished()
        waiter = nil
        answering = false
        guard !ended else { return }
        let close = closing || coordinator.draining
        finish(HTTPExchange.response(to: answer, method: method, closing: close), closing: close)
    }

    /// Writes `bytes`; then closes after them, or reads on.
    private func finish(_ bytes: [UInt8], closing: Bool) {
        var bytes = bytes
        connection.write(taking: &bytes)
        lastActivity = .now
        guard !closing else {
            ended = true
            connection.closeAfterWrites()
            return
        }
        connection.startReading()
        answerNext()
    }

    /// Once a second: a request taking too long to arrive gets 408, an idle connection past
    /// `httpKeepAlive` or a connection past `httpConnectionAge` is closed.
    private func tick() {
        guard !ended, !answering else { return }
        let now = ContinuousClock.now
        if let started = requestStartedAt, parser.bufferedBytes > 0 {
            let waited = parser.isReadingBody ? now - lastActivity : now - started
            if waited > limits.httpHeaderTimeout {
                finish(HTTPExchange.plain(408, "the request did not arrive within \(limits.httpHeaderTimeout)", closing: true), closing: true)
            }
        } else if now - lastActivity > limits.httpKeepAlive || now - openedAt > limits.httpConnectionAge {
            ended = true
            connection.closeAfterWrites()
        }
    }

    private func end() {
        guard !cleanedUp else { return }
        cleanedUp = true
        ended = true
        timer?.close()
        timer = nil
        if let waiter {
            self.waiter = nil
            coordinator.flights.cancel(waiter)
        }
        onClose(id)
    }
}
