import Foundation
import Monarch
import MonarchClient
import MonarchWire
import TestOrigins
import Testing

/// The test origin behind [cache, network] (`api/...`, a TTL of 60 s), an HTTP front door on a
/// free TCP port and a Unix socket, and `http.purgeFrom` as given (nothing: absent).
private func purgeConfig(origin: TestServerProcess, purgeFrom: String?) -> ClusterOptions {
    var options = ClusterOptions(custom: """
        domains:
          api: [cache, network]
        routes:
          - match: "api/..."
            domain: api
            upstream: http://127.0.0.1:\(origin.port)/...
            ttl: 60s
        workers:
          cache: { count: 1, memory: 8MB }
          network: { count: 1, allow: ["\(origin.allowEntry)"] }
        \(purgeFrom.map { "http: {purgeFrom: \($0)}" } ?? "")

        """)
    options.http = ["tcp:127.0.0.1:0", "unix:$FOLDER/h.sock"]
    return options
}

/// Runs `body` with the origin, a cluster with a front door (see ``purgeConfig(origin:purgeFrom:)``),
/// a client of it and the front door's TCP port.
private func withPurgeCluster(
    purgeFrom: String?, _ body: (TestCluster, MonarchClient, UInt16) async throws -> Void
) async throws {
    try await TestServerProcess.withOrigin { origin in
        try await TestCluster.with(purgeConfig(origin: origin, purgeFrom: purgeFrom)) { cluster in
            let ready = try await cluster.up.waitForOutput(containing: "http on tcp:127.0.0.1:")
            let port = try #require(HTTPFetch.port(inOutput: ready))
            try await cluster.withClient { client in try await body(cluster, client, port) }
        }
    }
}

/// The body of `path`'s answer through `client` (`policy` when given), and whether it was stale.
private func read(_ client: MonarchClient, _ path: String, policy: CachePolicy? = nil) async throws -> (text: String, stale: Bool)? {
    guard let response = try await perform(client, Request(path: path, policy: policy)).success else { return nil }
    return (String(decoding: response.body, as: UTF8.self), response.stale)
}

/// The purge report in `answer`'s JSON body.
private struct PurgeReport: Decodable, Equatable {
    var status: String
    var removed: Int
    var markedStale: Int?
    var workers: Int
    var targets: [String]
    var message: String?
}

private func report(_ answer: HTTPAnswer) throws -> PurgeReport {
    try JSONDecoder().decode(PurgeReport.self, from: Data(answer.body.utf8))
}

/// The next change of `watch`; fails the test after 20 s.
private func nextChange(_ watch: CacheWatch) async throws -> CacheChange? {
    try await within(20, "a change of \(watch.targets)") {
        var iterator = watch.makeAsyncIterator()
        return await iterator.next()
    }
}

@Suite("HTTP purge", .serialized)
struct HTTPPurgeTests {
    @Test("monarch check says who may PURGE; a bad http.purgeFrom entry exits 78 naming its key")
    func check() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try folder.write("files/a.txt", "a")
        let yaml = """
            listen: {clients: unix:run/c.sock, workers: unix:run/w.sock, http: tcp:127.0.0.1:8088}
            domains: {static: [bundle]}
            routes: [{match: "...", domain: static}]
            workers: {bundle: {root: files}}

            """
        try folder.write("monarch.yml", yaml)
        let nobody = try await FirstMinutesTests.monarch(["check"], in: folder.path)
        #expect(nobody.status == 0 && nobody.stdout.contains("http: tcp:127.0.0.1:8088; PURGE from nobody (http.purgeFrom)"), "\(nobody)")
        try folder.write("monarch.yml", yaml + "http: {purgeFrom: [unix, 127.0.0.1]}\n")
        let some = try await FirstMinutesTests.monarch(["check"], in: folder.path)
        #expect(some.status == 0 && some.stdout.contains("PURGE from unix, 127.0.0.1"), "\(some)")
        try folder.write("monarch.yml", yaml + "http: {purgeFrom: [localhost]}\n")
        let bad = try await FirstMinutesTests.monarch(["check"], in: folder.path)
        #expect(bad.status == 78 && bad.stderr.contains("http.purgeFrom[0]: expected unix, an IP address or a CIDR block"), "\(bad)")
    }

    @Test("Without http.purgeFrom every PURGE is refused with 403 naming the key, and nothing is dropped")
    func refusedWithoutConfiguration() async throws {
        try await withPurgeCluster(purgeFrom: nil) { cluster, client, port in
            #expect(try await read(client, "api/tagged/a?keys=k")?.text == "a 1")
            try await cluster.waitForWriteBacks(1)
            let byTCP = try await HTTPProbe.exchange(HTTPProbe.request("PURGE", "/api/tagged/a?keys=k"), port: port)
            #expect(byTCP.status == 403 && byTCP.header("Monarch-Error") == "forbidden", "\(byTCP)")
            #expect(byTCP.body.contains("http.purgeFrom lists nobody"), "\(byTCP)")
            let byUnix = try await HTTPProbe.exchange(
                HTTPProbe.request("PURGE", "/api/tagged/a?keys=k", headers: ["Surrogate-Key: k"]),
                unixPath: cluster.folder.path + "/h.sock")
            #expect(byUnix.status == 403, "\(byUnix)")
            #expect(try await read(client, "api/tagged/a?keys=k")?.text == "a 1", "still cached")
        }
    }

    @Test("PURGE from a listed address drops a path's entries, or every entry tagged with a Surrogate-Key; others get 403; watchers hear it")
    func purgesByPathAndSurrogateKey() async throws {
        try await withPurgeCluster(purgeFrom: "[127.0.0.1]") { cluster, client, port in
            for path in ["api/tagged/a?keys=user-1%20common", "api/tagged/b?keys=common", "api/tagged/c?keys=other"] {
                #expect(try await read(client, path)?.text.hasSuffix(" 1") == true)
            }
            try await cluster.waitForWriteBacks(3)
            let watcher = try await cluster.connect()
            defer { Task { await watcher.close() } }
            let common = try await watcher.watch(.tag("common"))
            let byPath = try await watcher.watch(.path("api/tagged/c?keys=other"))

            // From another loopback address, or the Unix socket: not listed.
            let stranger = try await HTTPProbe.exchange(HTTPProbe.request("PURGE", "/api/tagged/c?keys=other"), port: port, from: "127.0.0.2")
            #expect(stranger.status == 403 && stranger.body.contains("not allowed from 127.0.0.2"), "\(stranger)")
            let unix = try await HTTPProbe.exchange(HTTPProbe.request("PURGE", "/api/tagged/c?keys=other"), unixPath: cluster.folder.path + "/h.sock")
            #expect(unix.status == 403, "\(unix)")
            #expect(try await read(client, "api/tagged/c?keys=other")?.text == "c 1", "still cached")

            let byPathAnswer = try await HTTPProbe.exchange(HTTPProbe.request("PURGE", "/api/tagged/c?keys=other"), port: port)
            #expect(byPathAnswer.status == 200 && byPathAnswer.header("Content-Type") == "application/json", "\(byPathAnswer)")
            #expect(try report(byPathAnswer) == PurgeReport(
                status: "ok", removed: 1, workers: 1, targets: ["GET api api/tagged/c?keys=other", "HEAD api api/tagged/c?keys=other"]))
            #expect(try await nextChange(byPath) == CacheChange(kind: .invalidated, key: "GET api api/tagged/c?keys=other"))
            #expect(try await read(client, "api/tagged/c?keys=other")?.text == "c 2", "fetched again")

            let byKeys = try await HTTPProbe.exchange(
                HTTPProbe.request("PURGE", "/anything", headers: ["Surrogate-Key: common  nothing-tagged"]), port: port)
            #expect(byKeys.status == 200, "\(byKeys)")
            #expect(try report(byKeys) == PurgeReport(status: "ok", removed: 2, workers: 1, targets: ["common", "nothing-tagged"]))
            #expect(try await nextChange(common) == CacheChange(kind: .invalidated, tag: "common"))
            #expect(try await read(client, "api/tagged/a?keys=user-1%20common")?.text == "a 2")
            #expect(try await read(client, "api/tagged/b?keys=common")?.text == "b 2")

            let nothing = try await HTTPProbe.exchange(HTTPProbe.request("PURGE", "/api/never-read"), port: port)
            #expect(nothing.status == 200, "\(nothing)")
            #expect(try report(nothing).removed == 0, "\(nothing)")
            let noRoute = try await HTTPProbe.exchange(HTTPProbe.request("PURGE", "/elsewhere"), port: port)
            #expect(noRoute.status == 404 && noRoute.header("Monarch-Error") == "noRoute", "\(noRoute)")
            let badSoft = try await HTTPProbe.exchange(HTTPProbe.request("PURGE", "/api/x", headers: ["Monarch-Soft-Purge: yes"]), port: port)
            #expect(badSoft.status == 400 && badSoft.body.contains("Monarch-Soft-Purge"), "\(badSoft)")
            let noKeys = try await HTTPProbe.exchange(HTTPProbe.request("PURGE", "/api/x", headers: ["Surrogate-Key:  "]), port: port)
            #expect(noKeys.status == 400, "\(noKeys)")
            // The front door serves reads as before.
            let get = try await HTTPProbe.exchange(HTTPProbe.request("GET", "/api/tagged/b?keys=common"), port: port)
            #expect(get.status == 200 && get.body == "b 2", "\(get)")
        }
    }

    @Test("A soft purge keeps the entry stale: answered stale where the policy allows, refreshed, never answered fresh by the hot tier")
    func softPurge() async throws {
        try await withPurgeCluster(purgeFrom: "[unix, \"::1\", 127.0.0.0/8]") { cluster, client, port in
            let path = "api/tagged/s?keys=soft"
            #expect(try await read(client, path)?.text == "s 1")
            try await cluster.waitForWriteBacks(1)
            // Read again and again: a hit, which the hot tier keeps too.
            for _ in 0..<3 {
                let hit = try await read(client, path, policy: .cacheThenRefresh)
                #expect(hit?.text == "s 1" && hit?.stale == false)
            }
            let watcher = try await cluster.connect()
            defer { Task { await watcher.close() } }
            let byTag = try await watcher.watch(.tag("soft"))

            // Over the Unix socket, listed as unix.
            let soft = try await HTTPProbe.exchange(
                HTTPProbe.request("PURGE", "/x", headers: ["Surrogate-Key: soft", "Monarch-Soft-Purge: 1"]),
                unixPath: cluster.folder.path + "/h.sock")
            #expect(soft.status == 200, "\(soft)")
            #expect(try report(soft) == PurgeReport(status: "ok", removed: 0, markedStale: 1, workers: 1, targets: ["soft"]))
            #expect(try await nextChange(byTag) == CacheChange(kind: .invalidated, tag: "soft"))

            // Kept, and stale: cacheThenRefresh answers it at once and refreshes it behind.
            let stale = try await read(client, path, policy: .cacheThenRefresh)
            #expect(stale?.text == "s 1" && stale?.stale == true, "\(String(describing: stale))")
            var hits = 1
            try await eventually("the refresh") {
                let refreshed = try await read(client, path, policy: .cacheThenRefresh)
                hits = Int(refreshed?.text.dropFirst(2) ?? "") ?? 0
                return hits >= 2 && refreshed?.stale == false
            }

            // By path, from 127.0.0.1 (in 127.0.0.0/8); cacheFirst then revalidates at the origin.
            let byPath = try await HTTPProbe.exchange(
                HTTPProbe.request("PURGE", "/" + path, headers: ["Monarch-Soft-Purge: 1"]), port: port)
            #expect(try report(byPath) == PurgeReport(
                status: "ok", removed: 0, markedStale: 1, workers: 1, targets: ["GET api \(path)", "HEAD api \(path)"]))
            #expect(try await read(client, path)?.text == "s \(hits + 1)")
            let purgedAgain = try await HTTPProbe.exchange(
                HTTPProbe.request("PURGE", "/" + path, headers: ["Monarch-Soft-Purge: 0"]), port: port)
            #expect(try report(purgedAgain).removed == 1, "Monarch-Soft-Purge: 0 removes: \(purgedAgain)")
        }
    }
}
