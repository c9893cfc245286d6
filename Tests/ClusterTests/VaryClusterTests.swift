import Foundation
import Monarch
import MonarchClient
import MonarchWire
import TestOrigins
import Testing

/// Issue 26, findings 5 and 10, through real processes: variants by `Vary`, credentials past
/// the cache, tracing ids, and the query the upstream is asked.
@Suite("Vary, credentials and query order in a cluster", .serialized)
struct VaryClusterTests {
    /// What the origin's `/mirror` saw: the target and the request headers.
    private struct Mirrored: Decodable {
        var target: String
        var headers: [String: String]
    }

    private func mirrored(_ result: Result<Response, ChainError>) throws -> Mirrored {
        try JSONDecoder().decode(Mirrored.self, from: try #require(result.success).body)
    }

    @Test("fr and en variants are kept apart and both served from the cache; a credentialed read reaches the origin past an anonymous entry and is not kept; no tracing id reaches the origin from a shared read")
    func variantsAndCredentials() async throws {
        try await withTaggedOrigin { cluster, client in
            var stored = 0
            for language in ["fr", "en"] {
                let fetched = try await perform(client, Request(
                    path: "api/mirror?vary=Accept-Language", headers: ["Accept-Language": language]))
                #expect(try mirrored(fetched).headers["accept-language"] == language)
                #expect(fetched.success?.source == "network")
                stored += 1
                try await cluster.waitForWriteBacks(stored)
            }
            for language in ["fr", "en"] {
                let hit = try await perform(client, Request(
                    path: "api/mirror?vary=Accept-Language", headers: ["accept-language": language]))
                #expect(try mirrored(hit).headers["accept-language"] == language)
                #expect(hit.success?.source == "cache")
            }

            // An anonymous entry, then a credentialed read, then an anonymous one again.
            let anonymous = try await perform(client, Request(path: "api/mirror?who=1", headers: ["X-Request-Id": "r-1"]))
            #expect(try mirrored(anonymous).headers["x-request-id"] == nil)
            stored += 1
            try await cluster.waitForWriteBacks(stored)
            for (name, value) in [("Authorization", "Bearer alice"), ("X-Api-Key", "alice"), ("Cookie", "sid=alice")] {
                let personal = try await perform(client, Request(path: "api/mirror?who=1", headers: [name: value]))
                #expect(personal.success?.source == "network")
                #expect(try mirrored(personal).headers[name.lowercased()] == value)
            }
            let again = try await perform(client, Request(path: "api/mirror?who=1"))
            #expect(again.success?.source == "cache")
            let seen = try mirrored(again).headers
            #expect(seen["authorization"] == nil && seen["x-api-key"] == nil && seen["cookie"] == nil)
            #expect(try await cluster.status().writeBacks == stored)
        }
    }

    @Test("Two orders of one query share an entry, and the origin is asked in the key's order; a + reaches it as given")
    func queryOrder() async throws {
        try await withTaggedOrigin { cluster, client in
            let first = try await perform(client, Request(path: "api/mirror?b=2&a=1&q=1+2"))
            #expect(try mirrored(first).target == "/mirror?a=1&b=2&q=1+2")
            try await cluster.waitForWriteBacks(1)
            let second = try await perform(client, Request(path: "api/mirror?q=1+2&a=1&b=2"))
            #expect(second.success?.source == "cache")
            #expect(try mirrored(second).target == "/mirror?a=1&b=2&q=1+2")
        }
    }
}
