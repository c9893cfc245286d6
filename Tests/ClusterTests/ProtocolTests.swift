import Foundation
import Monarch
import MonarchClient
import MonarchWire
import Testing

/// A misbehaving connection gets a protocol error and is closed; nobody else notices.
@Suite("Protocol robustness")
struct ProtocolTests {
    private func expectError(_ message: WireMessage?, _ code: ProtocolErrorCode, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .error(let error)? = message else {
            Issue.record("expected an error message, got \(String(describing: message))", sourceLocation: sourceLocation)
            return
        }
        #expect(error.code == code, "\(error.message)", sourceLocation: sourceLocation)
    }

    @Test("Garbage frames: an error, a close, and other clients keep working")
    func garbage() async throws {
        try await TestCluster.with { cluster in
            let bystander = try await cluster.connect()
            defer { Task { await bystander.close() } }
            #expect(try await perform(bystander, Request(path: "docs/hello.txt")).success?.status == 200)
            let path = cluster.folder.path + "/c.sock"

            // Invalid JSON after a proper hello.
            let invalidJSON = try RawSocket(path: path)
            guard case .welcome? = try invalidJSON.greet() else {
                Issue.record("no welcome")
                return
            }
            invalidJSON.send(payload: Array("{\"type\":\"request\",".utf8))
            expectError(try invalidJSON.nextMessage(), .invalidJSON)
            #expect(try invalidJSON.isClosedByPeer())

            // Not UTF-8.
            let notUTF8 = try RawSocket(path: path)
            _ = try notUTF8.greet()
            notUTF8.send(payload: [0x7B, 0xFF, 0xFE, 0x7D])
            expectError(try notUTF8.nextMessage(), .invalidUTF8)
            #expect(try notUTF8.isClosedByPeer())

            // A length over the 16 MiB limit (only the header is sent).
            let oversized = try RawSocket(path: path)
            _ = try oversized.greet()
            oversized.write([0x01, 0x00, 0x00, 0x01])
            expectError(try oversized.nextMessage(), .oversizedFrame)
            #expect(try oversized.isClosedByPeer())

            // An unknown message type.
            let unknown = try RawSocket(path: path)
            _ = try unknown.greet()
            unknown.send(payload: Array(#"{"type":"teleport","id":3}"#.utf8))
            expectError(try unknown.nextMessage(), .unknownType)
            #expect(try unknown.isClosedByPeer())

            // The well-behaved client never noticed; new ones connect fine.
            let again = try await perform(bystander, Request(path: "docs/guide/intro.md"))
            #expect(again.success?.status == 200, "\(again)")
            let newcomer = try await cluster.connect()
            #expect(try await perform(newcomer, Request(path: "docs/other.txt")).success?.status == 200)
            await newcomer.close()
            let status = try await cluster.status(via: bystander)
            #expect(status.clients == 1, "the broken connections are gone")
        }
    }

    @Test("Reusing the id of a request still in flight is a protocol error")
    func reusedID() async throws {
        try await TestCluster.with(ClusterOptions(bundleCount: 1, latency: "5s")) { cluster in
            let raw = try RawSocket(path: cluster.folder.path + "/c.sock")
            guard case .welcome? = try raw.greet() else {
                Issue.record("no welcome")
                return
            }
            raw.send(.request(RequestMessage(id: 5, path: "docs/hello.txt")))
            raw.send(.request(RequestMessage(id: 5, path: "docs/other.txt")))
            expectError(try raw.nextMessage(), .unexpectedMessage)
            #expect(try raw.isClosedByPeer())
        }
    }

    @Test("A request before hello, and a client hello on the workers socket: error and close")
    func wrongOpenings() async throws {
        try await TestCluster.with { cluster in
            let clientPath = cluster.folder.path + "/c.sock"
            let workerPath = cluster.folder.path + "/w.sock"

            let noHello = try RawSocket(path: clientPath)
            noHello.send(.request(RequestMessage(id: 1, path: "docs/hello.txt")))
            expectError(try noHello.nextMessage(), .unexpectedMessage)
            #expect(try noHello.isClosedByPeer())

            let wrongRole = try RawSocket(path: workerPath)
            wrongRole.send(.hello(Hello(role: .client)))
            expectError(try wrongRole.nextMessage(), .unexpectedMessage)
            #expect(try wrongRole.isClosedByPeer())

            let wrongRoleOnClients = try RawSocket(path: clientPath)
            wrongRoleOnClients.send(.hello(Hello(role: .worker, kind: "bundle")))
            expectError(try wrongRoleOnClients.nextMessage(), .unexpectedMessage)
            #expect(try wrongRoleOnClients.isClosedByPeer())


            // The cluster is unharmed: its worker still serves, and no bogus worker registered.
            let client = try await cluster.connect()
            #expect(try await perform(client, Request(path: "docs/hello.txt")).success?.status == 200)
            let status = try await cluster.status(via: client)
            #expect(status.bundleWorkers.count == 1)
            await client.close()
        }
    }
}

/// Workers of kinds no domain names, and the exchanges the direction table allows either way.
@Suite("Protocol conformance")
struct ProtocolConformanceTests {
    @Test("A worker of a kind no domain uses registers and leaves without harming the coordinator")
    func strayWorkerKind() async throws {
        try await TestCluster.with { cluster in
            let stray = try RawSocket(path: cluster.folder.path + "/w.sock")
            stray.send(.hello(Hello(role: .worker, kind: "stray", pid: 1)))
            guard case .welcome? = try stray.nextMessage() else {
                Issue.record("the stray worker got no welcome")
                return
            }
            // Its connection ends: the coordinator removes it from its pool (and says so).
            shutdown(stray.fd, Int32(SHUT_RDWR))
            try await eventually("the stray worker's end to be logged") {
                cluster.up.stderr.text.contains("worker stray#1 (pid 1) disconnected")
            }
            let client = try await cluster.connect()
            #expect(try await perform(client, Request(path: "docs/hello.txt")).success?.status == 200)
            await client.close()
            #expect(cluster.up.isRunning, "stderr:\n\(cluster.up.stderr.text)")
        }
    }

    @Test("A worker's ping gets a pong, and a client's stray pong is ignored")
    func pingsBothWays() async throws {
        try await TestCluster.with { cluster in
            let worker = try RawSocket(path: cluster.folder.path + "/w.sock")
            worker.send(.hello(Hello(role: .worker, kind: "bundle", pid: 1)))
            guard case .welcome? = try worker.nextMessageAnsweringPings() else {
                Issue.record("the worker got no welcome")
                return
            }
            worker.send(.ping(PingMessage(id: 7)))
            #expect(try worker.nextMessageAnsweringPings() == .pong(PongMessage(id: 7)))

            let client = try RawSocket(path: cluster.folder.path + "/c.sock")
            guard case .welcome? = try client.greet() else {
                Issue.record("the client got no welcome")
                return
            }
            client.send(.pong(PongMessage(id: 3)))
            client.send(.ping(PingMessage(id: 4)))
            #expect(try client.nextMessage() == .pong(PongMessage(id: 4)))
        }
    }

    @Test("A hello with a higher version is welcomed with version 1")
    func versionNegotiation() async throws {
        try await TestCluster.with { cluster in
            let client = try RawSocket(path: cluster.folder.path + "/c.sock")
            client.send(.hello(Hello(role: .client, version: 3)))
            guard case .welcome(let welcome)? = try client.nextMessage() else {
                Issue.record("a version 3 hello was not welcomed")
                return
            }
            #expect(welcome.version == 1)
            client.send(.ping(PingMessage(id: 1)))
            #expect(try client.nextMessage() == .pong(PongMessage(id: 1)))
        }
    }
}
