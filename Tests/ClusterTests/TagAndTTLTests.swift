import Foundation
import Monarch
import MonarchClient
import MonarchWire
import TestOrigins
import Testing

/// A cluster whose `api` domain is [cache, network] in front of the test origin: `api/...`
/// with a TTL of 60 s, `short/...` of 2 s; tags bounded to 3 of at most 16 bytes.
func taggedOriginConfig(origin: TestServerProcess, extraLimits: [String] = []) -> ClusterOptions {
    ClusterOptions(custom: """
        domains:
          api: [cache, network]
        routes:
          - match: "api/..."
            domain: api
            upstream: http://127.0.0.1:\(origin.port)/...
            ttl: 60s
          - match: "short/..."
            domain: api
            upstream: http://127.0.0.1:\(origin.port)/...
            ttl: 2s
        workers:
          cache: { count: 1, store: sqlite:$FOLDER/cache/cache.db, memory: 8MB }
          network: { count: 1, allow: ["\(origin.allowEntry)"] }
        limits:
          tagsPerEntry: 3
          tagBytes: 16
        \(extraLimits.map { "  \($0)" }.joined(separator: "\n"))

        """)
}

/// Runs `body` with the test origin and a cluster in front of it.
func withTaggedOrigin(
    extraLimits: [String] = [], _ body: (TestCluster, MonarchClient) async throws -> Void
) async throws {
    try await TestServerProcess.withOrigin { origin in
        try await TestCluster.with(taggedOriginConfig(origin: origin, extraLimits: extraLimits)) { cluster in
            try await cluster.withClient { client in try await body(cluster, client) }
        }
    }
}

private func text(_ result: Result<Response, ChainError>) -> String? {
    result.success.map { String(decoding: $0.body, as: UTF8.self) }
}

@Suite("Tags and TTL", .serialized)
struct TagAndTTLTests {
    @Test("An upstream's Surrogate-Key or Cache-Tag tags the entry; invalidating a tag drops every entry with it, from the CLI and the client")
    func tagInvalidation() async throws {
        try await withTaggedOrigin { cluster, client in
            #expect(text(try await perform(client, Request(path: "api/tagged/a?keys=user-1%20common"))) == "a 1")
            #expect(text(try await perform(client, Request(path: "api/tagged/b?keys=user-2,common&header=Cache-Tag"))) == "b 1")
            #expect(text(try await perform(client, Request(path: "api/tagged/c?keys=other"))) == "c 1")
            try await cluster.waitForWriteBacks(3)
            #expect(text(try await perform(client, Request(path: "api/tagged/a?keys=user-1%20common"))) == "a 1")

            let address = "\(cluster.clientAddress)"
            let one = try await Spawned.run(Executables.monarch, ["invalidate", "--tag", "user-1", "--address", address])
            #expect(one.status == 0, "\(one.stderr)")
            #expect(String(decoding: one.stdout, as: UTF8.self) == "removed 1 entry on 1 cache worker (user-1)\n")
            #expect(text(try await perform(client, Request(path: "api/tagged/a?keys=user-1%20common"))) == "a 2")
            #expect(text(try await perform(client, Request(path: "api/tagged/b?keys=user-2,common&header=Cache-Tag"))) == "b 1")
            try await cluster.waitForWriteBacks(4)

            let common = try await client.invalidate(tag: "common")
            #expect(common.removed == 2)
            #expect(common.targets == ["common"])
            #expect(text(try await perform(client, Request(path: "api/tagged/b?keys=user-2,common&header=Cache-Tag"))) == "b 2")
            #expect(text(try await perform(client, Request(path: "api/tagged/c?keys=other"))) == "c 1")

            let none = try await Spawned.run(Executables.monarch, ["invalidate", "--tag", "nobody", "--address", address])
            #expect(String(decoding: none.stdout, as: UTF8.self) == "nothing matched nobody: removed 0 entries on 1 cache worker\n")
        }
    }

    @Test("Tags are bounded: past tagsPerEntry and over tagBytes they are left out, and the entry is kept")
    func tagBounds() async throws {
        try await withTaggedOrigin { cluster, client in
            let path = "api/tagged/d?keys=this-tag-is-far-too-long%20t1%20t1%20t2%20t3%20t4"
            #expect(text(try await perform(client, Request(path: path))) == "d 1")
            try await cluster.waitForWriteBacks(1)
            #expect(try await client.invalidate(tag: "t4").matchedNothing)
            #expect(try await client.invalidate(tag: "this-tag-is-far-too-long").matchedNothing)
            #expect(try await perform(client, Request(path: path)).success?.source == "cache")
            #expect(try await client.invalidate(tag: "t3").removed == 1)
            #expect(text(try await perform(client, Request(path: path))) == "d 2")
        }
    }

    @Test("A request's TTL is honoured within the route's: it shortens the route's and the upstream's, never lengthens")
    func requestTTL() async throws {
        try await withTaggedOrigin { cluster, client in
            func read(_ path: String, ttl: Duration?) async throws -> Response {
                var request = Request(path: path)
                request.route.ttl = ttl
                return try #require(try await perform(client, request).success)
            }
            // Read again as soon as it is kept, and given a second: on a loaded machine the
            // other reads and write-backs could outlast a shorter life.
            _ = try await read("short/tagged/x", ttl: .seconds(1))
            try await cluster.waitForWriteBacks(1)
            let shorter = try await read("short/tagged/x", ttl: nil)
            let shorterRead = ContinuousClock.now
            #expect(shorter.source == "cache")
            #expect(shorter.ttl == .seconds(1))
            _ = try await read("short/tagged/y", ttl: .seconds(600))
            _ = try await read("api/tagged/z", ttl: nil)
            _ = try await read("api/etag", ttl: .seconds(5))
            try await cluster.waitForWriteBacks(4)
            let capped = try await read("short/tagged/y", ttl: nil)
            #expect(capped.source == "cache")
            #expect(capped.ttl == .seconds(2), "a TTL above the route's is held to the route's")
            #expect(try await read("api/tagged/z", ttl: nil).ttl == .seconds(60))
            let upstream = try await read("api/etag", ttl: nil)
            #expect(upstream.source == "cache")
            #expect(upstream.ttl == .seconds(5), "the requested TTL caps the upstream's max-age=60")

            // The entry asked to live 1 s is stale before the route's 2 s (the time is what is
            // tested: its passing from the read that found it fresh).
            try await Task.sleep(until: shorterRead + .milliseconds(1200))
            var stale = Request(path: "short/tagged/x", policy: .cacheThenRefresh)
            stale.deadline = .seconds(10)
            #expect(try await perform(client, stale).success?.stale == true)
        }
    }
}
