import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

extension TCPConnection {
    /// The status line of the answer to `GET /hello.txt` on this connection (closed after it).
    func statusOfAGet() -> String {
        send("GET /hello.txt HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        return readToEnd().components(separatedBy: "\r\n").first ?? ""
    }
}

/// The front door's connections shared among peers: one TCP peer address holds at most
/// `httpConnectionsPerPeer`, and at a full door a newcomer takes the place of an idle
/// connection of the peer holding the most, so one stranger cannot lock the others out.
@Suite("HTTP connections shared among peers", .serialized)
struct HTTPPeerShareTests {
    @Test("A peer past httpConnectionsPerPeer is closed at once; at a full door a newcomer replaces an idle connection of the peer holding the most, unless its own peer holds as many")
    func peersShareTheDoor() async throws {
        let configuration = """
            listen: {clients: unix:run/c.sock, workers: unix:run/w.sock, http: tcp:127.0.0.1:0}
            domains: {static: [bundle]}
            routes: [{match: "...", domain: static}]
            workers: {bundle: {root: files}}
            limits: {httpConnections: 6, httpConnectionsPerPeer: 4}

            """
        try await ClusterGate.inTurn {
            _ = try await HTTPListenerCluster.run(configuration: configuration, files: ["files/hello.txt": Array("hello\n".utf8)]) { port, _ in
                // One stranger: four connections held, the fifth closed at once.
                let stranger = try (0..<4).map { _ in try TCPConnection(port: port, from: "127.0.0.2") }
                let fifth = try TCPConnection(port: port, from: "127.0.0.2")
                #expect(fifth.isClosed(within: 10_000), "a fifth connection from one peer is closed (httpConnectionsPerPeer 4)")
                #expect(!stranger[3].isClosed(within: 200), "the first four stay open")

                // Another peer fills the door (6), then a third peer comes: one of the stranger's
                // idle connections makes room, and the newcomer is served.
                let neighbour = try (0..<2).map { _ in try TCPConnection(port: port, from: "127.0.0.3") }
                #expect(!neighbour[1].isClosed(within: 200))
                let newcomer = try TCPConnection(port: port, from: "127.0.0.4")
                #expect(newcomer.statusOfAGet() == "HTTP/1.1 200 OK")
                let closed = stranger.filter { $0.isClosed(within: 2000) }.count
                #expect(closed == 1, "exactly one of the stranger's idle connections made room")
                #expect(!neighbour.contains { $0.isClosed(within: 100) }, "the neighbour, holding fewer, kept both")

                // The door is full again (3 + 2 + the newcomer's, closed after its answer, makes room
                // for one); a peer holding as many as the largest is refused rather than served at its cost.
                let filler = try TCPConnection(port: port, from: "127.0.0.3")
                #expect(!filler.isClosed(within: 200), "a place was free: the newcomer's connection closed")
                let refused = try TCPConnection(port: port, from: "127.0.0.3")
                #expect(refused.isClosed(within: 10_000), "127.0.0.3 would hold 4, more than the 3 the largest holds: closed")
                #expect(stranger.filter { $0.isClosed(within: 100) }.count == 1, "nothing more was taken from the stranger")
            }
        }
    }
}
