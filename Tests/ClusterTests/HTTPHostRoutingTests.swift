import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TestOrigins
import Testing

/// Several sites on one HTTP listener (`host:` routes) and a body limit raised for one route
/// (`httpBody:`), through `monarch up`, a memory cache and a network worker in front of the
/// test origin.
@Suite("HTTP host routes and body limits", .serialized)
struct HTTPHostRoutingTests {
    /// `page` is the origin's `/tagged/site-a` for `a.test`, `/tagged/site-b` for every host
    /// below `b.test`, `/tagged/any` for the rest (each answers `NAME N`, N its hits); `upload`
    /// takes bodies of 4MB, `post` those of `limits.httpBody` (1MB); 127.0.0.1 may PURGE.
    private func withSites(_ body: (UInt16) async throws -> Void) async throws {
        try await TestServerProcess.withOrigin { origin in
            let configuration = """
                listen: {clients: unix:run/c.sock, workers: unix:run/w.sock, http: tcp:127.0.0.1:0}
                domains: {sites: [cache, network]}
                routes:
                  - {match: page, host: a.test, domain: sites, upstream: "\(origin.url("/tagged/site-a"))", ttl: 60s}
                  - {match: page, host: "*.b.test", domain: sites, upstream: "\(origin.url("/tagged/site-b"))", ttl: 60s}
                  - {match: page, domain: sites, upstream: "\(origin.url("/tagged/any"))", ttl: 60s}
                  - {match: upload, domain: sites, upstream: "\(origin.url("/echo"))", httpBody: 4MB}
                  - {match: post, domain: sites, upstream: "\(origin.url("/echo"))"}
                workers: {cache: {memory: 8MB}, network: {allow: ["\(origin.allowEntry)"]}}
                http: {purgeFrom: [127.0.0.1]}

                """
            try await ClusterGate.inTurn {
                let errors = try await HTTPListenerCluster.run(configuration: configuration) { port, _ in try await body(port) }
                #expect(!errors.contains("error"), "\(errors)")
            }
        }
    }

    /// `METHOD /PATH HTTP/1.1` for `host` (no Host line when nil), with `headers`, closing.
    private func request(_ method: String, _ path: String, host: String?, headers: [String] = []) -> String {
        (["\(method) \(path) HTTP/1.1"] + (host.map { ["Host: \($0)"] } ?? []) + headers + ["Connection: close", "", ""])
            .joined(separator: "\r\n")
    }

    private func get(_ port: UInt16, host: String) async throws -> HTTPAnswer {
        try await HTTPProbe.exchange(request("GET", "/page", host: host), port: port)
    }

    @Test("Hosts reach their own routes for one path, each answer cached apart and hit with its own body; PURGE with a Host drops that host's entry alone")
    func sitesOnOneListener() async throws {
        try await withSites { port in
            // First reads: each host its own upstream (the wildcard's for any host below b.test).
            let sites = [("a.test", "site-a 1"), ("www.b.test:8080", "site-b 1"), ("c.test", "any 1")]
            for (host, expected) in sites {
                let answer = try await get(port, host: host)
                #expect(answer.status == 200 && answer.body == expected, "\(host): \(answer)")
                #expect(answer.header("Cache-Status")?.contains("fwd=miss") == true, "\(host): \(answer)")
            }
            // Then each is a hit with its own body, however its host is spelled; another host
            // below b.test shares the wildcard route's entry, and a request without Host gets
            // the route without host's.
            let again = [("A.Test.", "site-a 1"), ("x.y.b.test", "site-b 1"), ("d.test", "any 1")]
            for (host, expected) in again {
                try await eventually("a hit for \(host)") {
                    let answer = try await get(port, host: host)
                    #expect(answer.body == expected, "\(host): \(answer)")
                    return answer.header("Cache-Status")?.hasPrefix("monarch; hit") == true
                }
            }
            let noHost = try await HTTPProbe.exchange("GET /page HTTP/1.0\r\n\r\n", port: port)
            #expect(noHost.body == "any 1" && noHost.header("Cache-Status")?.hasPrefix("monarch; hit") == true, "\(noHost)")

            // A PURGE of /page for a.test drops a.test's entries, named by its host.
            let purge = try await HTTPProbe.exchange(request("PURGE", "/page", host: "a.test"), port: port)
            #expect(purge.status == 200, "\(purge)")
            #expect(purge.body.contains(#""targets":["GET sites //a.test/page","HEAD sites //a.test/page"]"#), "\(purge)")
            #expect(purge.body.contains(#""removed":1"#), "\(purge)")
            let refetched = try await get(port, host: "a.test")
            #expect(refetched.body == "site-a 2" && refetched.header("Cache-Status")?.contains("fwd=miss") == true, "\(refetched)")
            for (host, expected) in [("www.b.test", "site-b 1"), ("c.test", "any 1")] {
                let kept = try await get(port, host: host)
                #expect(kept.body == expected && kept.header("Cache-Status")?.hasPrefix("monarch; hit") == true, "\(host): \(kept)")
            }
        }
    }

    @Test("A route with httpBody 4MB takes a 2MB body (after 100 Continue); another route answers 413 before the body is sent")
    func routeBodyLimits() async throws {
        try await withSites { port in
            let body = [UInt8](repeating: UInt8(ascii: "a"), count: 2 << 20)
            let head = request("POST", "/upload", host: "x.test", headers: [
                "Content-Type: text/plain", "Content-Length: \(body.count)", "Expect: 100-continue",
            ])
            let (interim, answer) = try await offPool { () throws -> (String, String) in
                let socket = try RawSocket(tcpPort: port)
                socket.write(Array(head.utf8))
                let interim = Self.read(socket, until: "\r\n\r\n")
                socket.write(body)
                return (interim, Self.read(socket, until: nil))
            }
            #expect(interim == "HTTP/1.1 100 Continue\r\n\r\n", "\(interim)")
            #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(answer.prefix(500))")
            #expect(answer.contains(#""Content-Length": "2097152""#), "the origin got the whole body: \(answer.prefix(500))")

            // The same body is over the limit of a route without httpBody (1MB), and 5MB over
            // this route's: refused as soon as the head is read, no 100 Continue sent.
            for (path, length) in [("/post", body.count), ("/upload", 5 << 20)] {
                let refused = try await HTTPProbe.exchange(request("POST", path, host: "x.test", headers: [
                    "Content-Length: \(length)", "Expect: 100-continue",
                ]), port: port)
                #expect(refused.status == 413, "\(path): \(refused)")
                #expect(!refused.text.contains("100 Continue"), "\(path): \(refused)")
            }
            // Within the listener's limit, the other route takes a body as before.
            let small = try await HTTPProbe.exchange(
                request("POST", "/post", host: "x.test", headers: ["Content-Length: 5"]) + "hello", port: port)
            #expect(small.status == 200 && small.body.contains(#""body": "hello""#), "\(small)")
        }
    }

    /// What `socket` receives until `marker` has arrived (nil: until the peer closes), within
    /// the socket's receive timeout.
    private static func read(_ socket: RawSocket, until marker: String?) -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while marker.map({ !String(decoding: received, as: UTF8.self).contains($0) }) ?? true {
            // One byte at a time before a marker, so nothing after it is taken.
            let wanted = marker == nil ? buffer.count : 1
            let count = buffer.withUnsafeMutableBytes { recv(socket.fd, $0.baseAddress, wanted, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            received += buffer[..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }
}
