import Monarch
import MonarchConfig
import MonarchHTTP
import MonarchLoop
import MonarchWire

/// One HTTP/1.1 connection of the front door: it reads requests strictly
/// (``HTTPRequestParser``), routes each by its target and `Host` (``HTTPRequest/host``), and
/// answers them in order through the coordinator's chain (pipelined ones one after another).
/// A body is read within its route's `httpBody`, else `limits.httpBody` (over it: 413, before
/// any `100 Continue`). It keeps to the other `limits.http*` bounds: a head within
/// `httpHeaderTimeout` (else 408), a body pausing no longer than that and done within
/// `httpConnectionAge` (else 408), an idle connection closed after `httpKeepAlive`, at most
/// `httpRequests` requests and `httpConnectionAge` per connection, the requests in flight of
/// `limits.inFlight` (else 503 with `Retry-After`). It reads on while a request is answered, but
/// never more than one whole request ahead, and nothing while an answer waits for a slow
/// reader; a client that takes none of its answers for `httpKeepAlive` is cut off. A client
/// that half-closes still gets the answers to the requests it sent whole before its end.
///
/// The door owns every session and calls it directly; libuv's callbacks find the session
/// through the door, by its number, and enter ``CoordinatorActor`` with `assumeIsolated`.
@CoordinatorActor
final class HTTPSession {
    private let loop: EventLoop
    /// The session's number among the coordinator's clients.
    let id: Int
    /// The door that owns the session.
    private unowned let door: HTTPFrontDoor
    private let connection: StreamConnection
    private let coordinator: Coordinator
    private let limits: Configuration.Limits
    private let parser: HTTPRequestParser
    private let onClose: (Int) -> Void
    /// Who is at the other end, for `PURGE` (``HTTPPurge``).
    private let peer: HTTPPeer
    private var timer: LoopTimer?
    /// The coordinator's waiter of the request being answered.
    private var waiter: Int?
    private var answering = false
    private var served = 0
    /// Where the session reads the time: the coordinator's clock.
    private let clock: MonotonicClock
    private let openedAt: ContinuousClock.Instant
    private var lastActivity: ContinuousClock.Instant
    /// When the first byte of the request now arriving came.
    private var requestStartedAt: ContinuousClock.Instant?
    private var continueSent = false
    /// Whether nothing more is answered (the connection closes or closed).
    private var ended = false
    /// Whether ``end()`` has run.
    private var cleanedUp = false
    /// Whether the client sent its end of file: what it sent whole is answered, then it closes.
    private var clientFinished = false
    /// Whether the coordinator is being asked now (an answer given at once comes inside it).
    private var answeringInline = false
    /// Bytes queued for the client at the last tick, and when the client last took some.
    private var lastQueued = 0
    private var lastWriteProgress: ContinuousClock.Instant

    /// A session of `door` on `connection`, answering through `coordinator`; `onClose` runs
    /// once when it ends.
    init(
        id: Int, door: HTTPFrontDoor, connection: StreamConnection, coordinator: Coordinator,
        limits: Configuration.Limits, onClose: @escaping (Int) -> Void
    ) {
        self.id = id
        self.door = door
        self.loop = coordinator.loop
        self.connection = connection
        self.coordinator = coordinator
        self.limits = limits
        self.clock = coordinator.clock
        let now = clock.now
        (openedAt, lastActivity, lastWriteProgress) = (now, now, now)
        var httpLimits = HTTPLimits()
        httpLimits.requestLineBytes = limits.httpRequestLineBytes
        httpLimits.headerBlockBytes = limits.httpHeaderBlockBytes
        httpLimits.headerCount = limits.httpHeaders
        httpLimits.bodyBytes = limits.httpBodyBytes
        // Asked on the loop, in answerNext: the routing in force then decides.
        parser = HTTPRequestParser(limits: httpLimits) { [coordinator] head in
            CoordinatorActor.assumeIsolated { coordinator.routing.httpBodyBytes(target: head.target, host: head.host) }
        }
        self.onClose = onClose
        self.peer = HTTPPeer(of: connection)
    }

    /// Starts reading, and the timer that enforces the time limits.
    func start() {
        // Each callback runs on the loop; once `end()` has run, the session is no longer the
        // door's and hears nothing more.
        connection.onRead = { [unowned door, id] bytes in
            // Read at once, on the loop, before the callback returns: nothing keeps the pointer.
            nonisolated(unsafe) let bytes = bytes
            CoordinatorActor.assumeIsolated { door.session(id)?.received(bytes) }
        }
        connection.staysOpenAfterEndOfFile = true
        connection.onEnd = { [unowned door, id] how in CoordinatorActor.assumeIsolated { door.session(id)?.clientEnded(how) } }
        connection.onWritabilityChanged = { [unowned door, id] writable in
            if writable { CoordinatorActor.assumeIsolated { door.session(id)?.answerNext() } }
        }
        timer = try? LoopTimer(on: loop)
        // Fires in real time; what it decides is read on the coordinator's clock.
        timer?.start(afterMs: 1000, repeatMs: 1000) { [unowned door, id] in CoordinatorActor.assumeIsolated { door.session(id)?.tick() } }
        connection.startReading()
    }

    /// Whether nothing is under way: no request being answered or arriving, no answer waiting
    /// for the client.
    var isIdle: Bool {
        !ended && !answering && parser.bufferedBytes == 0 && !parser.isReadingBody && connection.queuedWriteBytes == 0
    }

    /// Closes the connection now (the coordinator stops, or the front door makes room).
    func close() {
        connection.close()
        end()
    }

    private func received(_ bytes: UnsafeRawBufferPointer) {
        let now = clock.now
        if requestStartedAt == nil { requestStartedAt = now }
        lastActivity = now
        parser.append(bytes)
        answerNext()
    }

    /// Answers the requests that have arrived whole, one after another, while none is being
    /// answered and the client takes what it is sent; then reads on only if there is room.
    /// Answers given at once (refusals, hot hits) go round this loop, never deeper.
    private func answerNext() {
        while !ended, !answering, connection.isWritable {
            switch parser.next() {
            case nil:
                if clientFinished {
                    // Nothing whole is left to answer, and nothing more will come.
                    ended = true
                    connection.closeAfterWrites()
                    end()
                    return
                }
                if parser.isReadingBody, parser.expectsContinue, !continueSent {
                    continueSent = true
                    connection.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
                }
                updateReading()
                return
            case .failure(let error):
                finish(HTTPExchange.plain(error.status, error.reason, closing: true), closing: true)
                return
            case .success(let request):
                continueSent = false
                requestStartedAt = parser.bufferedBytes > 0 ? clock.now : nil
                answer(request)
            }
        }
        updateReading()
    }

    /// Reads only while a request may still be arriving and the client takes its answers, and
    /// never more than one whole request ahead. Reading goes on while a request is answered:
    /// stopping and starting again would cost two system calls a request.
    private func updateReading() {
        let read = !ended && connection.isWritable && parser.bufferedBytes < parser.largestRequestBytes
        if read { connection.startReading() } else { connection.stopReading() }
    }

    private func answer(_ request: HTTPRequest) {
        served += 1
        guard WireProtocol.isValidMethod(request.method) else {
            // The chain speaks uppercase methods only (letters, digits, `-`, `_`).
            finish(HTTPExchange.plain(501, "the method \(request.method) is not implemented", closing: !request.keepAlive),
                   closing: !request.keepAlive)
            return
        }
        guard coordinator.admitExchange() else {
            finish(HTTPExchange.plain(
                503, "the coordinator has \(limits.inFlight) requests in flight (limits.inFlight); try again later",
                code: "overloaded", closing: true, extra: [HTTPHeader(name: "Retry-After", value: "1")]), closing: true)
            return
        }
        answering = true
        let closing = !request.keepAlive || served >= limits.httpRequests || clock.now - openedAt >= limits.httpConnectionAge
        let host = request.host
        if request.method == HTTPPurge.method {
            Task(executorPreference: loop) { [door, id, peer, coordinator] in
                let answer = await HTTPPurge.answer(request, from: peer, coordinator: coordinator, closing: closing)
                await door.purged(answer, closing: closing, session: id)
            }
            return
        }
        let message = HTTPExchange.message(for: request, id: MessageID(served))
        answeringInline = true
        // The coordinator answers in the same isolation, on the loop.
        let waiter = coordinator.answer(message, host: host, for: id, arrived: clock.now) { [door, id, coordinator] answer in
            coordinator.exchangeFinished()
            door.session(id)?.answered(answer, to: request, host: host, closing: closing)
        }
        answeringInline = false
        if answering { self.waiter = waiter }
    }

    /// The coordinator's answer to `request`, its exchange already counted as finished.
    private func answered(_ answer: ClientAnswer, to request: HTTPRequest, host: String?, closing: Bool) {
        waiter = nil
        guard !ended else {
            answering = false
            return
        }
        let paths = HTTPExchange.statusAndHeaders(of: answer).map { status, headers in
            HTTPExchange.invalidatedPaths(by: request, status: status, responseHeaders: headers)
        } ?? []
        guard !paths.isEmpty else { return deliver(answer, to: request, closing: closing) }
        // An unsafe method changed the resource: what caches keep of it goes before the answer
        // does, so the client's next read finds none of it (RFC 9111 §4.4). The paths are on
        // this host, so they are resolved for it (a route with a host keys its entries so).
        Task(executorPreference: loop) { [door, id, coordinator] in
            for path in paths {
                _ = await coordinator.invalidate(InvalidateMessage(id: 0, target: .path(path)), host: host)
            }
            await door.deliver(answer, to: request, closing: closing, session: id)
        }
    }

    /// Writes the answer to `request`, then goes on with the next request.
    func deliver(_ answer: ClientAnswer, to request: HTTPRequest, closing: Bool) {
        answering = false
        guard !ended else { return }
        let close = closing || coordinator.draining
        finish(HTTPExchange.output(to: answer, for: request, closing: close), closing: close)
        // An answer given later than its request (most): go on with the next one. One given at
        // once is taken up by the loop in answerNext.
        if !answeringInline { answerNext() }
    }

    /// Sends the answer to a `PURGE` (``HTTPPurge``), its exchange already counted as
    /// finished, then goes on as after any answer.
    func purged(_ answer: [UInt8], closing: Bool) {
        answering = false
        guard !ended else { return }
        // The answer says Connection: close when the coordinator drains (HTTPPurge checks).
        finish(answer, closing: closing || coordinator.draining)
        answerNext()
    }

    /// Writes `bytes`; closes after them when `closing`.
    private func finish(_ bytes: [UInt8], closing: Bool) {
        finish(HTTPOutput(bytes), closing: closing)
    }

    /// Writes `output` (its shared body uncopied); closes after it when `closing`.
    private func finish(_ output: HTTPOutput, closing: Bool) {
        if let body = output.sharedBody {
            connection.write(output.bytes, then: body)
        } else {
            var bytes = output.bytes
            connection.write(taking: &bytes)
        }
        lastActivity = clock.now
        if closing {
            ended = true
            connection.closeAfterWrites()
        }
    }

    /// Once a second: a connection whose queued answers the client has not taken for
    /// `httpKeepAlive` is closed outright; a request taking too long to arrive gets 408; an
    /// idle connection past `httpKeepAlive` or one past `httpConnectionAge` is closed.
    private func tick() {
        let now = clock.now
        let queued = connection.queuedWriteBytes
        if queued == 0 || queued < lastQueued { lastWriteProgress = now }
        lastQueued = queued
        if queued > 0 && now - lastWriteProgress > limits.httpKeepAlive {
            connection.close()
            return
        }
        guard !ended, !answering, connection.isWritable else { return }
        if parser.bufferedBytes > 0 || parser.isReadingBody {
            // A head must arrive within the timeout of its first byte; a body may pause that long,
            // but not keep the connection past its age (a byte every few seconds would, for weeks).
            let waited = parser.isReadingBody ? now - lastActivity : now - (requestStartedAt ?? lastActivity)
            if waited > limits.httpHeaderTimeout {
                finish(HTTPExchange.plain(408, "the request did not arrive within \(limits.httpHeaderTimeout)", closing: true), closing: true)
            } else if now - openedAt > limits.httpConnectionAge {
                finish(HTTPExchange.plain(
                    408, "the request was still arriving when the connection reached its age limit (\(limits.httpConnectionAge))",
                    closing: true), closing: true)
            }
        } else if now - lastActivity > limits.httpKeepAlive || now - openedAt > limits.httpConnectionAge {
            ended = true
            connection.closeAfterWrites()
        }
    }

    /// The client's end: at end of file, what it sent whole is still answered (the connection
    /// stays open for that); on an error, or once closed here, the session ends now.
    private func clientEnded(_ how: StreamEnd) {
        guard how == .endOfFile, !ended else { return end() }
        clientFinished = true
        answerNext()
    }

    private func end() {
        guard !cleanedUp else { return }
        cleanedUp = true
        ended = true
        timer?.close()
        timer = nil
        // The connection may outlive the session (it closes once its writes are done): it must
        // call nothing of it from now on.
        connection.onRead = nil
        connection.onEnd = nil
        connection.onWritabilityChanged = nil
        if let waiter {
            self.waiter = nil
            coordinator.flights.cancel(waiter)
        }
        onClose(id)
    }
}
