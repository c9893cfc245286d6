import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MonarchClient
import Testing

/// A plain TCP connection to 127.0.0.1 for speaking HTTP by hand.
final class TCPConnection {
    private let descriptor: Int32

    /// Whether a connection to 127.0.0.1:`port` is accepted now.
    static func accepts(port: UInt16) -> Bool {
        (try? TCPConnection(port: port)) != nil
    }

    /// A connection to `port`, from the loopback address `source` when given (127.0.0.N: the
    /// coordinator sees another peer); `smallReceiveBuffer` makes the kernel hold little of
    /// what the server sends, so the server's own queue fills.
    init(port: UInt16, from source: String? = nil, smallReceiveBuffer: Bool = false) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if smallReceiveBuffer {
            var size: Int32 = 4096
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        func call(_ address: String, port: UInt16, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            socketAddress.sin_port = port.bigEndian
            socketAddress.sin_addr.s_addr = inet_addr(address)
            return withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        let bound = source.map { call($0, port: 0) { bind(descriptor, $0, $1) } } ?? 0
        let connected = bound == 0 ? call("127.0.0.1", port: port) { connect(descriptor, $0, $1) } : -1
        guard descriptor >= 0, connected == 0 else {
            throw SpawnError("cannot connect from \(source ?? "127.0.0.1") to 127.0.0.1:\(port): errno \(errno)")
        }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(descriptor) }

    /// Whether the server closed the connection (end of file, or a reset) within
    /// `milliseconds`, having sent nothing.
    func isClosed(within milliseconds: Int32) -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, milliseconds) == 1 else { return false }
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, Int32(MSG_PEEK)) <= 0
    }

    /// Ends this side's writing (the server reads end of file) and keeps reading.
    func shutdownWriting() {
        _ = shutdown(descriptor, Int32(SHUT_WR))
    }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Everything the server sends until it closes the connection (or 20 s pass).
    func readToEnd() -> String {
        var all: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            all += buffer[..<count]
        }
        return String(decoding: all, as: UTF8.self)
    }
}

@Suite("HTTP front door", .serialized)
struct HTTPFrontDoorTests {
    /// Runs `body` with `monarch up` serving files/ through a cache on an HTTP port.
    private func withFrontDoor(
        limits: String = "{httpHeaders: 20, httpBody: 1KB}", _ body: (UInt16) async throws -> Void
    ) async throws {
        try await ClusterGate.inTurn { try await runFrontDoor(limits: limits, body) }
    }

    private func runFrontDoor(limits: String, _ body: (UInt16) async throws -> Void) async throws {
        let configuration = """
            listen: {clients: unix:run/c.sock, workers: unix:run/w.sock, http: tcp:127.0.0.1:0}
            domains: {static: [cache, bundle]}
            routes: [{match: "...", domain: static, ttl: 60s}]
            workers: {bundle: {root: files}, cache: {memory: 8MB}}
            limits: \(limits)

            """
        let files = ["files/hello.txt": Array("hello http\n".utf8), "files/big.bin": [UInt8](repeating: 0x61, count: 4 << 20)]
        let errors = try await HTTPListenerCluster.run(configuration: configuration, files: files) { port, _ in try await body(port) }
        #expect(!errors.contains("error"), "\(errors)")
    }

    @Test("A GET through the chain, then a cache hit with Age, Via and Cache-Status; pipelined requests answered in order: a hit, a HEAD without body, a 404 that says so")
    func servesThroughTheChain() async throws {
        try await withFrontDoor { port in
            let first = try TCPConnection(port: port)
            first.send("GET /hello.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let miss = first.readToEnd()
            #expect(miss.hasPrefix("HTTP/1.1 200 OK\r\n") && miss.hasSuffix("\r\n\r\nhello http\n"), "\(miss)")
            #expect(miss.contains("Cache-Status: monarch; fwd=miss"), "\(miss)")
            // Once written back, the read is a hit.
            try await eventually("a cache hit") {
                let again = try TCPConnection(port: port)
                again.send("GET /hello.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                return again.readToEnd().contains("Cache-Status: monarch; hit")
            }
            let pipelined = try TCPConnection(port: port)
            pipelined.send("GET /hello.txt HTTP/1.1\r\nHost: x\r\n\r\nHEAD /hello.txt HTTP/1.1\r\nHost: x\r\n\r\n"
                + "GET /missing.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let text = pipelined.readToEnd()
            let answers = Array(text.components(separatedBy: "HTTP/1.1 ").dropFirst())
            #expect(answers.count == 3, "\(text)")
            guard answers.count == 3 else { return }
            let (hit, head, missing) = (answers[0], answers[1], answers[2])
            #expect(hit.contains("Cache-Status: monarch; hit"), "\(hit)")
            #expect(hit.contains("Age: "), "\(hit)")
            #expect(hit.contains("Via: 1.1 monarch"), "\(hit)")
            #expect(hit.hasSuffix("\r\n\r\nhello http\n"), "\(hit)")
            #expect(head.hasPrefix("200 OK\r\n") && head.hasSuffix("\r\n\r\n"), "a HEAD has no body: \(head)")
            #expect(missing.hasPrefix("404 Not Found\r\n"), "\(missing)")
            #expect(missing.contains("Monarch-Error: exhausted"), "\(missing)")
            #expect(missing.contains("Connection: close"), "\(missing)")
        }
    }

    @Test("Smuggling forms, a bad method and the limits are refused with their statuses, and the connection closed; others are served meanwhile")
    func refusesWhatItMustNot() async throws {
        try await withFrontDoor { port in
            let cases: [(request: String, status: String)] = [
                ("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "400"),
                ("GET /a HTTP/1.1\nHost: x\n\n", "400"),
                ("GET /a HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n", "400"),
                ("GET /a%0d%0aX:y HTTP/1.1\r\nHost: x\r\n\r\n", "400"),
                ("GET /a HTTP/2.0\r\nHost: x\r\n\r\n", "505"),
                ("Get /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "400"),
                ("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n", "413"),
                ("GET /a HTTP/1.1\r\nHost: x\r\n" + (0..<25).map { "H\($0): v\r\n" }.joined() + "\r\n", "431"),
                ("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\nHost: x\r\n\r\n", "414"),
            ]
            for (request, status) in cases {
                let connection = try TCPConnection(port: port)
                connection.send(request)
                let answer = connection.readToEnd()
                #expect(answer.hasPrefix("HTTP/1.1 \(status) "), "\(request.prefix(60)): \(answer.prefix(200))")
            }
            // The front door still serves.
            let fine = try TCPConnection(port: port)
            fine.send("GET /hello.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(fine.readToEnd().hasSuffix("hello http\n"))
        }
    }

    @Test("A head that does not arrive within httpHeaderTimeout gets 408; an idle connection is closed after httpKeepAlive")
    func slowAndIdleConnectionsEnd() async throws {
        try await withFrontDoor(limits: "{httpHeaderTimeout: 1s, httpKeepAlive: 2s}") { port in
            let slow = try TCPConnection(port: port)
            slow.send("GET /hello.txt HTTP/1.1\r\nHost: x\r\n")  // and never the empty line
            let started = ContinuousClock.now
            let answer = slow.readToEnd()
            #expect(answer.hasPrefix("HTTP/1.1 408 "), "\(answer)")
            let idle = try TCPConnection(port: port)
            idle.send("GET /hello.txt HTTP/1.1\r\nHost: x\r\n\r\n")
            let served = idle.readToEnd()
            #expect(served.hasSuffix("hello http\n"), "answered, then closed once idle: \(served)")
            #expect(ContinuousClock.now - started < .seconds(15))
        }
    }

    @Test("A body sent a byte a second, each pause within httpHeaderTimeout, gets 408 once the connection is older than httpConnectionAge")
    func aTrickledBodyEndsAtTheConnectionAge() async throws {
        try await withFrontDoor(limits: "{httpHeaderTimeout: 2s, httpConnectionAge: 3s, httpBody: 1KB}") { port in
            let slow = try TCPConnection(port: port)
            let started = ContinuousClock.now
            slow.send("POST /hello.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
            // 100 bytes at this pace would take 100 s; the connection's age ends it after 3.
            for _ in 0..<7 {
                try await Task.sleep(for: .seconds(1))
                slow.send("b")
            }
            let answer = slow.readToEnd()
            #expect(answer.hasPrefix("HTTP/1.1 408 "), "\(answer)")
            #expect(answer.contains("age limit"), "\(answer)")
            #expect(ContinuousClock.now - started < .seconds(15))
        }
    }

    @Test("A client that half-closes gets its whole answer; one that takes none of its answers is cut off; the coordinator serves on")
    func halfClosedAndStuckClients() async throws {
        try await withFrontDoor(limits: "{httpKeepAlive: 2s}") { port in
            let halfClosed = try TCPConnection(port: port, smallReceiveBuffer: true)
            halfClosed.send("GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
            halfClosed.shutdownWriting()
            try await Task.sleep(for: .milliseconds(300))  // the answer queues while nothing reads it
            let answer = halfClosed.readToEnd()
            #expect(answer.hasPrefix("HTTP/1.1 200 OK"), "\(answer.prefix(200))")
            #expect(answer.utf8.count > 4 << 20, "the whole body: \(answer.utf8.count) bytes")

            // Ten big answers asked for and none read: the connection is closed once the client
            // has taken nothing for httpKeepAlive, with far fewer than ten answers sent.
            let stuck = try TCPConnection(port: port, smallReceiveBuffer: true)
            stuck.send(String(repeating: "GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n", count: 10))
            // Nothing read for well past httpKeepAlive (2 s): the time is what is tested (reading
            // is what would end it, so there is nothing to wait on instead).
            try await Task.sleep(for: .seconds(5))
            let taken = stuck.readToEnd()
            #expect(taken.components(separatedBy: "HTTP/1.1 200 OK").count - 1 < 10, "\(taken.utf8.count) bytes")

            let fine = try TCPConnection(port: port)
            fine.send("GET /hello.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(fine.readToEnd().hasSuffix("hello http\n"))
        }
    }

    @Test("Requests pipelined and then half-closed, while the first is answered, are all answered in order before the connection closes")
    func pipelinedThenHalfClosed() async throws {
        try await withFrontDoor { port in
            let client = try TCPConnection(port: port)
            // The first is a miss answered by the bundle worker: the second and the end of file
            // arrive while it is under way.
            client.send("GET /hello.txt?first HTTP/1.1\r\nHost: x\r\n\r\nGET /missing.txt HTTP/1.1\r\nHost: x\r\n\r\n")
            client.shutdownWriting()
            let answers = client.readToEnd()
            let statuses = answers.components(separatedBy: "HTTP/1.1 ").dropFirst().map { String($0.prefix(3)) }
            #expect(statuses == ["200", "404"], "\(answers.prefix(600))")
            #expect(answers.contains("hello http\n"))
        }
    }

    @Test("While monarch up drains, the front door takes no new connection, and the request in flight is answered")
    func drainClosesTheDoor() async throws {
        try await ClusterGate.inTurn {
            let folder = try TemporaryFolder()
            defer { folder.remove() }
            try folder.write("files/slow.txt", "slow\n")
            try folder.write("monarch.yml", """
                listen: {clients: unix:run/c.sock, workers: unix:run/w.sock, http: tcp:127.0.0.1:0}
                domains: {static: [bundle]}
                routes: [{match: "...", domain: static}]
                workers: {bundle: {root: files, latency: 5s}}

                """)
            let up = try FirstMinutesTests.start(Executables.monarch, ["up"], in: folder.path)
            defer { _ = up.signal(SIGKILL) }
            try await FirstMinutesTests.waitFor("ready", from: up)
            let ready = up.standardOutput.text
            let port = try #require(HTTPFetch.port(inOutput: ready))
            let slow = try TCPConnection(port: port)
            slow.send("GET /slow.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            // The request reaches the bundle, which takes 5 s.
            let watcher = try await within(40, "connecting for the status") {
                try await MonarchClient.connect(to: .unix(path: folder.path + "/run/c.sock"))
            }
            try await eventually("the request at the bundle") {
                ClusterStatus(try await within(20, "status") { try await watcher.status() })
                    .workers("bundle").first?.inFlight == 1
            }
            await watcher.close()
            _ = up.signal(SIGTERM)
            try await eventually("the door to close") { !TCPConnection.accepts(port: port) }
            // Closed while the drain goes on, not only once the process is gone.
            #expect(up.exit == nil, "monarch up still drains the slow request")
            #expect(slow.readToEnd().hasSuffix("slow\n"), "the request in flight is answered")
            _ = try await up.waitForExit(timeout: .seconds(30))
        }
    }
}
