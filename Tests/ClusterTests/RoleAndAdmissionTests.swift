#if canImport(Glibc)
import Glibc
#endif
import MonarchWire
import Testing
import TestOrigins

/// Roles (each its own secret), the invalidation rate, handshake slots and client slots, against
/// a real `monarch up` over real sockets.
@Suite("Roles and admission", .serialized)
struct RoleAndAdmissionTests {
    /// A fake-worker cluster with a secret per role and a TCP client listener on `port`.
    static func securedCluster(port: UInt16? = nil, limits: [String] = []) -> ClusterOptions {
        var options = fakeWorkerCluster(limits: limits, token: "client-s3cret", workerToken: "worker-s3cret")
        options.adminToken = "admin-s3cret"
        options.tcpPort = port
        return options
    }

    /// The failure code answering each message sent on `socket`, in order (nil: not a failure).
    static func failureCodes(_ socket: RawSocket, _ messages: [WireMessage]) async throws -> [String?] {
        try await offPool {
            var codes: [MessageID: String?] = [:]
            for message in messages { socket.send(message) }
            while codes.count < messages.count {
                guard let answer = try socket.nextMessageAnsweringPings() else { break }
                switch answer {
                case .failure(let failure): codes[failure.id] = failure.error.code.rawValue
                case .result(let result): codes[result.id] = .some(nil)
                case .response(let response): codes[response.id] = .some(nil)
                default: continue
                }
            }
            return messages.map { codes[$0.id!] ?? "no answer" }
        }
    }

    @Test("The clients' token runs requests and named invalidations, not admin commands (forbidden, counted); the admin secret runs them")
    func clientsAreNotAdmins() async throws {
        try await TestCluster.with(Self.securedCluster()) { cluster in
            let client = try RawSocket(path: cluster.clientPath)
            guard case .welcome? = try await offPool({ try client.greet(token: "client-s3cret") }) else {
                Issue.record("the client was not welcomed")
                return
            }
            let codes = try await Self.failureCodes(client, [
                .status(StatusMessage(id: 1)),
                .scale(ScaleMessage(id: 2, kind: "bundle", count: 0)),
                .invalidate(InvalidateMessage(id: 3, target: .prefix(""))),
                .invalidate(InvalidateMessage(id: 4, target: .pathPrefix("docs/"))),
                .watch(WatchMessage(id: 5, target: .prefix(""))),
                .watch(WatchMessage(id: 6, target: .key("GET static docs/a"))),
                .invalidate(InvalidateMessage(id: 7, target: .key("GET static docs/a"))),
            ])
            #expect(codes[0..<5].allSatisfy { $0 == "forbidden" }, "\(codes)")
            #expect(codes[5] == nil, "a watch of a named key is a client's: \(codes)")
            #expect(codes[6] != "forbidden", "an invalidation by key is a client's: \(codes)")
            // The admin secret runs them (over TCP too); the refusals were counted.
            let status = try await cluster.status()
            #expect(status.counter("forbidden") == 5, "\(status.report)")
        }
    }

    @Test("A client's invalidations beyond limits.invalidationsPerSecond are answered overloaded; an admin's are not")
    func invalidationRate() async throws {
        try await TestCluster.with(Self.securedCluster(limits: ["invalidationsPerSecond: 3"])) { cluster in
            func codes(as token: String) async throws -> [String?] {
                let socket = try RawSocket(path: cluster.clientPath)
                guard case .welcome? = try await offPool({ try socket.greet(token: token) }) else { return [] }
                return try await Self.failureCodes(
                    socket, (1...10).map { .invalidate(InvalidateMessage(id: MessageID($0), target: .key("GET static k\($0)"))) })
            }
            let client = try await codes(as: "client-s3cret")
            #expect(client.count == 10)
            #expect(client.filter { $0 == "overloaded" }.count >= 6, "\(client)")
            let admin = try await codes(as: "admin-s3cret")
            #expect(admin.count == 10 && !admin.contains("overloaded"), "\(admin)")
        }
    }

    @Test("Connections that never say hello push out each other, not a client, a Unix-socket client or a worker")
    func handshakeFlood() async throws {
        let port = UInt16(try freeLocalPort())
        try await TestCluster.with(fakeWorkerClusterOnTCP(port: port, limits: ["handshakes: 8", "handshakesPerPeer: 4"])) { cluster in
            // Twelve strangers from one address, and four from another, all silent.
            var strangers: [RawSocket] = []
            for index in 0..<16 { strangers.append(try RawSocket(tcpPort: port, from: index < 12 ? "127.0.0.1" : "127.0.0.3")) }
            // All sixteen taken in: eight slots, so eight pushed out.
            try await eventually("the strangers to fill the handshake slots") {
                try await cluster.status().counter("connectionsRefused") ?? 0 >= 8
            }
            for source in ["127.0.0.1", "127.0.0.2"] {
                let newcomer = try RawSocket(tcpPort: port, from: source)
                let answer = try await offPool { try newcomer.greet() }
                guard case .welcome? = answer else {
                    Issue.record("a TCP client from \(source) was kept out: \(String(describing: answer))")
                    continue
                }
            }
            let local = try RawSocket(path: cluster.clientPath)
            guard case .welcome? = try await offPool({ try local.greet() }) else {
                Issue.record("a Unix-socket client was kept out")
                return
            }
            let worker = try await FakeWorker(at: cluster.workerPath, name: "during-the-flood")
            _ = worker
            #expect(try await cluster.status().counter("connectionsRefused") ?? 0 >= 8, "strangers were pushed out")
            _ = strangers
        }
    }

    @Test("A TCP peer holds at most limits.clientsPerPeer connections; the last limits.adminClients of limits.clients are for admins")
    func clientSlots() async throws {
        let port = UInt16(try freeLocalPort())
        let options = Self.securedCluster(port: port, limits: ["clients: 8", "clientsPerPeer: 2", "adminClients: 4"])
        try await TestCluster.with(options) { cluster in
            var held: [RawSocket] = []
            func greet(_ socket: RawSocket, _ token: String) async throws -> WireMessage? {
                held.append(socket)
                return try await offPool { try socket.greet(token: token) }
            }
            for _ in 0..<2 {
                guard case .welcome? = try await greet(RawSocket(tcpPort: port), "client-s3cret") else {
                    Issue.record("a first client was kept out")
                    return
                }
            }
            let third = try await greet(RawSocket(tcpPort: port), "client-s3cret")
            #expect(third == nil, "a third connection from 127.0.0.1 was let in: \(String(describing: third))")
            guard case .welcome? = try await greet(RawSocket(tcpPort: port, from: "127.0.0.2"), "client-s3cret") else {
                Issue.record("another peer was kept out")
                return
            }
            // The test cluster's own status connection came and went; four clients of a kind
            // now fill limits.clients (the helper above holds three; one more over Unix).
            guard case .welcome? = try await greet(RawSocket(path: cluster.clientPath), "client-s3cret") else {
                Issue.record("the fourth client was kept out")
                return
            }
            guard case .error(let full)? = try await greet(RawSocket(path: cluster.clientPath), "client-s3cret") else {
                Issue.record("a fifth client was let in past limits.clients")
                return
            }
            #expect(full.message.contains("limits.adminClients"), "\(full.message)")
            guard case .welcome? = try await greet(RawSocket(path: cluster.clientPath), "admin-s3cret") else {
                Issue.record("an admin was kept out by the clients")
                return
            }
            #expect(try await cluster.status().clients == 6, "four clients, the admin, and the status connection")
        }
    }
}

/// A fake-worker cluster (no secrets) that also listens for clients on TCP `port`.
func fakeWorkerClusterOnTCP(port: UInt16, limits: [String]) -> ClusterOptions {
    var options = fakeWorkerCluster(limits: limits)
    options.tcpPort = port
    return options
}
