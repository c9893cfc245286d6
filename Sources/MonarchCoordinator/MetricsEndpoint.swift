import Logging
import MonarchLoop
import MonarchWire

/// Serves metrics in Prometheus's text format over HTTP/1.1, and the admin pages beside them
/// (``AdminPages``: `/livez`, `/readyz`, `/status`): `GET` or `HEAD` only (others: 405 with
/// `Allow`), other paths 404, one request per connection (as scrapers and probes make them),
/// the request line and headers within 8 KiB and 5 seconds, at most 16 connections at once.
/// With secrets, every request for a page must carry `Authorization: Bearer SECRET` with one
/// of them.
///
/// Connections that have not sent their request yet never keep a scrape out: when all 16 are
/// taken, the one that has waited longest for its request is closed to make room (a scraper
/// sends its request as soon as it connects).
///
/// It runs on ``CoordinatorActor``; libuv's callbacks, which run on its loop, enter through
/// `assumeIsolated`, checked when they run.
@CoordinatorActor
final class MetricsEndpoint {
    /// The address as bound (a `tcp:…:0` shows the chosen port).
    private(set) var boundAddress: SocketAddress?
    private let address: SocketAddress
    /// The secrets a scrape may present; none: scrapes need none.
    private let secrets: [String]
    /// The loop whose thread the endpoint lives on.
    nonisolated let loop: EventLoop
    private let logger: Logger
    private let pages: AdminPages
    private var listener: Listener?
    private var open = 0
    /// The connections still reading their request, oldest first, by serial number, with the
    /// bytes of the request read so far.
    private var reading: [(serial: Int, stream: StreamConnection, head: [UInt8])] = []
    private var nextSerial = 0

    /// The largest request head read.
    static let maxHeadBytes = 8 << 10
    /// Scrapes served at once.
    static let maxConnections = 16

    /// An endpoint on `address` serving `pages`, asking for one of `secrets` when there are any.
    init(address: SocketAddress, secrets: [String], logger: Logger, pages: AdminPages) {
        self.address = address
        self.secrets = secrets
        self.loop = CoordinatorActor.loop
        self.logger = logger
        self.pages = pages
    }

    /// Listens.
    ///
    /// - Throws: ``UVError`` when the address cannot be bound.
    func start() throws(UVError) {
        let listener = try Listener(address: address, on: loop) { [unowned self] stream in
            CoordinatorActor.assumeIsolated { accept(stream) }
        }
        boundAddress = listener.boundAddress
        self.listener = listener
    }

    /// Stops listening.
    func close() {
        listener?.close()
        listener = nil
    }

    private func accept(_ stream: StreamConnection) {
        if open >= Self.maxConnections {
            // The one that has waited longest for its request makes room; if every one is
            // being answered, the new one waits for none.
            guard !reading.isEmpty else { return stream.close() }
            reading.removeFirst().stream.close()
        }
        open += 1
        let serial = nextSerial
        nextSerial += 1
        reading.append((serial, stream, []))
        let timer = try? LoopTimer(on: loop)
        timer?.start(afterMs: 5000) { stream.close() }
        stream.onEnd = { [unowned self] _ in
            timer?.close()
            CoordinatorActor.assumeIsolated {
                open -= 1
                reading.removeAll { $0.serial == serial }
            }
        }
        stream.onRead = { [unowned self] bytes in
            let chunk = Array(bytes)
            CoordinatorActor.assumeIsolated { read(chunk, serial: serial) }
        }
        stream.startReading()
    }

    /// Adds `bytes` to the request head of connection `serial`, and answers once the head is
    /// whole (or too large). A connection answered already reads nothing more.
    private func read(_ bytes: [UInt8], serial: Int) {
        guard let index = reading.firstIndex(where: { $0.serial == serial }) else { return }
        reading[index].head.append(contentsOf: bytes)
        let (_, stream, head) = reading[index]
        if let end = Self.endOfHead(head) {
            reading.remove(at: index)
            stream.stopReading()
            respond(to: Array(head[..<end]), on: stream)
        } else if head.count > Self.maxHeadBytes {
            reading.remove(at: index)
            Self.write(status: "431 Request Header Fields Too Large", body: Array("request head too large\n".utf8), to: stream)
        }
    }

    private func respond(to head: [UInt8], on stream: StreamConnection) {
        let lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let requestLine = lines.first.map { $0.split(separator: " ") } ?? []
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1.") else {
            return Self.write(status: "400 Bad Request", body: Array("not an HTTP/1.x request\n".utf8), to: stream)
        }
        let path = String(requestLine[1].prefix { $0 != "?" })
        guard AdminPages.paths.contains(path) else {
            return Self.write(
                status: "404 Not Found", body: Array("metrics are at /metrics; also /livez, /readyz and /status\n".utf8),
                to: stream)
        }
        guard requestLine[0] == "GET" || requestLine[0] == "HEAD" else {
            return Self.write(
                status: "405 Method Not Allowed", body: Array("\(path) answers GET and HEAD\n".utf8), to: stream,
                extraHeaders: "Allow: GET, HEAD\r\n")
        }
        if !secrets.isEmpty {
            let presented = lines.dropFirst().first { $0.lowercased().hasPrefix("authorization:") }
                .map { $0.drop { $0 != ":" }.dropFirst().trimmingPrefix(" ") }
            guard let presented, presented.hasPrefix("Bearer "),
                secrets.contains(where: { RoleGate.matches(String(presented.dropFirst("Bearer ".count)), $0) })
            else {
                return Self.write(
                    status: "401 Unauthorized", body: Array("a valid Authorization: Bearer token is required\n".utf8),
                    to: stream, extraHeaders: "WWW-Authenticate: Bearer\r\n")
            }
        }
        let isHead = requestLine[0] == "HEAD"
        let pages = self.pages
        Task(executorPreference: loop) {
            // Every path left is one of AdminPages.paths.
            guard let page = await pages.page(at: path) else { return stream.close() }
            Self.write(status: page.status, body: page.body, to: stream, contentType: page.contentType, omitBody: isHead)
        }
    }

    /// The index just past the blank line ending the request head, if it has arrived.
    private static func endOfHead(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count
        where bytes[index - 3] == 13 && bytes[index - 2] == 10 && bytes[index - 1] == 13 && bytes[index] == 10 {
            return index + 1
        }
        return nil
    }

    private nonisolated static func write(
        status: String, body: [UInt8], to stream: StreamConnection, contentType: String = "text/plain; charset=utf-8",
        extraHeaders: String = "", omitBody: Bool = false
    ) {
        let head = "HTTP/1.1 \(status)\r\nContent-Type: \(contentType)\r\nContent-Length: \(body.count)\r\n"
            + extraHeaders + "Connection: close\r\n\r\n"
        stream.write(Array(head.utf8) + (omitBody ? [] : body))
        stream.closeAfterWrites()
    }
}
