import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestOrigins

/// HTTP's caching rules (RFC 9111) through the HTTP listener, over a cache and a network
/// worker in front of the test origin: what is kept, reused, revalidated and dropped. The
/// conformance suite (scripts/conformance) covers the rules one by one; these hold the
/// pieces together in the cluster.
@Suite("HTTP caching", .serialized)
struct HTTPCachingTests {
    /// Runs `body` with `monarch up` relaying HTTP to the test origin through a memory cache.
    private func withRelay(_ body: (UInt16, TestServerProcess, String) async throws -> Void) async throws {
        let origin = try await TestServerProcess.origin()
        let configuration = """
            listen: {clients: unix:run/c.sock, workers: unix:run/w.sock, http: tcp:127.0.0.1:0}
            domains: {origin: [cache, network]}
            routes:
              - {match: "...", domain: origin, upstream: "\(origin.url("/..."))"}
              - {match: "nocache/...", domain: origin, upstream: "\(origin.url("/..."))", policy: noCache}
            workers: {cache: {memory: 8MB}, network: {allow: ["\(origin.allowEntry)"]}}

            """
        try await ClusterGate.inTurn {
            _ = try await HTTPListenerCluster.run(configuration: configuration) { port, folder in
                try await body(port, origin, "unix:\(folder)/run/c.sock")
            }
        }
    }

    /// One request on its own connection; the whole answer.
    private func exchange(_ port: UInt16, _ head: String, body: String = "") throws -> String {
        let connection = try TCPConnection(port: port)
        connection.send(head + "Host: 127.0.0.1\r\nConnection: close\r\n\r\n" + body)
        return connection.readToEnd()
    }

    @Test("A response with max-age is kept and reused with its Age; once stale it is revalidated with its ETag (a 304 from the origin); a client's own If-None-Match gets a 304")
    func keepsReusesAndRevalidates() async throws {
        try await withRelay { port, _, clients in
            // A max-age of 2 s: the first three requests must come within it, which a loaded
            // machine running the other suites beside this one may not do within 1 s.
            let first = try exchange(port, "GET /etag?max-age=2 HTTP/1.1\r\n")
            #expect(first.hasPrefix("HTTP/1.1 200 OK\r\n") && first.hasSuffix("tagged body"), "\(first)")
            #expect(first.contains("Cache-Status: monarch; fwd=miss; stored"), "\(first)")
            let hit = try exchange(port, "GET /etag?max-age=2 HTTP/1.1\r\n")
            #expect(hit.contains("Cache-Status: monarch; hit"), "\(hit)")
            #expect(hit.contains("\r\nAge: "), "\(hit)")
            // The coordinator's hot tier answers the next hit, as the cache worker would.
            let hot = try exchange(port, "GET /etag?max-age=2 HTTP/1.1\r\n")
            #expect(hot.contains("Cache-Status: monarch; hit; ttl="), "\(hot)")
            #expect(hot.contains("\r\nAge: 0\r\n") || hot.contains("\r\nAge: 1\r\n"), "\(hot)")
            let status = try await Spawned.run(Executables.monarch, ["status", "--json", "--address", clients])
            let report = try JSONSerialization.jsonObject(with: Data(status.stdout)) as? [String: Any]
            let domains = report?["domains"] as? [[String: Any]] ?? []
            #expect(domains.contains { ($0["hotHits"] as? Int ?? 0) >= 1 }, "\(String(decoding: status.stdout, as: UTF8.self))")
            // A request asking for validation is not answered from memory.
            let asked = try exchange(port, "GET /etag?max-age=2 HTTP/1.1\r\nCache-Control: no-cache\r\n")
            #expect(asked.contains("fwd=request; fwd-status=304"), "\(asked)")
            let notModified = try exchange(port, "GET /etag?max-age=2 HTTP/1.1\r\nIf-None-Match: \"v1\"\r\n")
            #expect(notModified.hasPrefix("HTTP/1.1 304 Not Modified\r\n"), "\(notModified)")
            #expect(notModified.contains("Etag: \"v1\""), "\(notModified)")
            #expect(!notModified.contains("tagged body"))
            // Past the answer's 2 s max-age, with room to spare: the time is what is tested.
            try await Task.sleep(for: .milliseconds(3200))
            let revalidated = try exchange(port, "GET /etag?max-age=2 HTTP/1.1\r\n")
            #expect(revalidated.hasPrefix("HTTP/1.1 200 OK\r\n") && revalidated.hasSuffix("tagged body"), "\(revalidated)")
            #expect(revalidated.contains("fwd=stale; fwd-status=304"), "\(revalidated)")
            let stats = try exchange(port, "GET /stats HTTP/1.1\r\n")
            #expect(stats.contains("\"notModified\": 2"), "the origin answered two conditional requests with 304: \(stats)")
        }
    }

    @Test("no-store and private answers are not kept; an upstream's 404 and 503 come back with their bodies; a POST that succeeds drops what was kept of its URL")
    func passesWhatItMustNotKeep() async throws {
        try await withRelay { port, _, _ in
            for value in ["no-store", "private,max-age=60"] {
                _ = try exchange(port, "GET /cache-control?value=\(value) HTTP/1.1\r\n")
                let again = try exchange(port, "GET /cache-control?value=\(value) HTTP/1.1\r\n")
                #expect(again.contains("Cache-Status: monarch; fwd=miss\r\n"), "\(value): \(again)")
            }
            let missing = try exchange(port, "GET /status/404 HTTP/1.1\r\n")
            #expect(missing.hasPrefix("HTTP/1.1 404 Not Found\r\n") && missing.hasSuffix("status 404"), "\(missing)")
            let unavailable = try exchange(port, "GET /status/503 HTTP/1.1\r\n")
            #expect(unavailable.hasPrefix("HTTP/1.1 503 ") && unavailable.hasSuffix("status 503"), "\(unavailable)")

            let path = "/cache-control?value=max-age%3D60"
            _ = try exchange(port, "GET \(path) HTTP/1.1\r\n")
            #expect(try exchange(port, "GET \(path) HTTP/1.1\r\n").contains("Cache-Status: monarch; hit"))
            let post = try exchange(port, "POST \(path) HTTP/1.1\r\nContent-Length: 1\r\n", body: "x")
            #expect(post.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(post)")
            let after = try exchange(port, "GET \(path) HTTP/1.1\r\n")
            #expect(after.contains("Cache-Status: monarch; fwd=miss; stored"), "the POST dropped the entry: \(after)")
        }
    }

    @Test("A route whose policy is noCache keeps nothing for HTTP clients either: every request goes to the origin")
    func noCacheRoutePassesTheCachesBy() async throws {
        try await withRelay { port, _, _ in
            for _ in 0..<3 {
                let answer = try exchange(port, "GET /nocache/etag?max-age=100 HTTP/1.1\r\n")
                #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n") && answer.hasSuffix("tagged body"), "\(answer)")
                #expect(answer.contains("Cache-Status: monarch; fwd=bypass\r\n"), "\(answer)")
                #expect(!answer.contains("\r\nAge: "), "\(answer)")
            }
            // The same resource through a caching route is kept, and then a hit.
            _ = try exchange(port, "GET /etag?max-age=100 HTTP/1.1\r\n")
            #expect(try exchange(port, "GET /etag?max-age=100 HTTP/1.1\r\n").contains("Cache-Status: monarch; hit"))
        }
    }

    @Test("A Range is served from a kept whole answer as 206 with Content-Range; one past the end is 416")
    func servesRangesFromWholeAnswers() async throws {
        try await withRelay { port, _, _ in
            let path = "/cache-control?value=max-age%3D60"
            _ = try exchange(port, "GET \(path) HTTP/1.1\r\n")
            let part = try exchange(port, "GET \(path) HTTP/1.1\r\nRange: bytes=1-3\r\n")
            #expect(part.hasPrefix("HTTP/1.1 206 Partial Content\r\n") && part.hasSuffix("\r\n\r\nint"), "\(part)")
            #expect(part.contains("Content-Range: bytes 1-3/6"), "\(part)")
            let beyond = try exchange(port, "GET \(path) HTTP/1.1\r\nRange: bytes=10-\r\n")
            #expect(beyond.hasPrefix("HTTP/1.1 416 "), "\(beyond)")
        }
    }
}
