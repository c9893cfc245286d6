import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// A connection to the front door from a loopback address of its own (127.0.0.N), so that
/// the coordinator sees several peers.
private final class PeerConnection {
    private let descriptor: Int32

    /// A connection from `source` (a 127.0.0.0/8 address) to 127.0.0.1:`port`.
    init(from source: String, port: UInt16) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = port.bigEndian
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard descriptor >= 0, bound == 0, connected == 0 else {
            throw SpawnError("cannot connect from \(source) to 127.0.0.1:\(port): errno \(errno)")
        }
    }

    deinit { close(descriptor) }

    /// Whether the coordinator closed the connection (end of file, or a reset) within
    /// `milliseconds`, having sent nothing.
    func isClosed(within milliseconds: Int32) -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, milliseconds) == 1 else { return false }
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, Int32(MSG_PEEK)) <= 0
    }

    /// The status line of the answer to `GET /hello.txt` on this connection.
    func statusOfAGet() -> String {
        let request = Array("GET /hello.txt HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var all: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            all += buffer[..<count]
        }
        return String(decoding: all, as: UTF8.self).components(separatedBy: "\r\n").first ?? ""
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
                let stranger = try (0..<4).map { _ in try PeerConnection(from: "127.0.0.2", port: port) }
                let fifth = try PeerConnection(from: "127.0.0.2", port: port)
                #expect(fifth.isClosed(within: 10_000), "a fifth connection from one peer is closed (httpConnectionsPerPeer 4)")
                #expect(!stranger[3].isClosed(within: 200), "the first four stay open")

                // Another peer fills the door (6), then a third peer comes: one of the stranger's
                // idle connections makes room, and the newcomer is served.
                let neighbour = try (0..<2).map { _ in try PeerConnection(from: "127.0.0.3", port: port) }
                #expect(!neighbour[1].isClosed(within: 200))
                let newcomer = try PeerConnection(from: "127.0.0.4", port: port)
                #expect(newcomer.statusOfAGet() == "HTTP/1.1 200 OK")
                let closed = stranger.filter { $0.isClosed(within: 2000) }.count
                #expect(closed == 1, "exactly one of the stranger's idle connections made room")
                #expect(!neighbour.contains { $0.isClosed(within: 100) }, "the neighbour, holding fewer, kept both")

                // The door is full again (3 + 2 + the newcomer's, closed after its answer, makes room
                // for one); a peer holding as many as the largest is refused rather than served at its cost.
                let filler = try PeerConnection(from: "127.0.0.3", port: port)
                #expect(!filler.isClosed(within: 200), "a place was free: the newcomer's connection closed")
                let refused = try PeerConnection(from: "127.0.0.3", port: port)
                #expect(refused.isClosed(within: 10_000), "127.0.0.3 would hold 4, more than the 3 the largest holds: closed")
                #expect(stranger.filter { $0.isClosed(within: 100) }.count == 1, "nothing more was taken from the stranger")
            }
        }
    }
}
