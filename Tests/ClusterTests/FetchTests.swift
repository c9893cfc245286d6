import Foundation
import Monarch
import MonarchClient
import MonarchWire
import Testing

/// Files from the bundle through the coordinator, and the chain errors the coordinator gives.
@Suite("Fetching")
struct FetchTests {
    @Test("A file from the bundle: status, source, body, content type; nested paths; / and URL forms")
    func fileFromBundle() async throws {
        try await TestCluster.with { cluster in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }

            let hello = try #require(try await perform(client, Request(path: "docs/hello.txt")).success)
            #expect(hello.status == 200)
            #expect(hello.source == "bundle")
            #expect(hello.body == Data(ClusterOptions.files["docs/hello.txt"]!))
            #expect(hello.headers["content-type"] == "text/plain; charset=utf-8")

            let nested = try #require(try await perform(client, Request(path: "docs/guide/intro.md")).success)
            #expect(nested.status == 200)
            #expect(nested.body == Data(ClusterOptions.files["docs/guide/intro.md"]!))
            #expect(nested.headers["content-type"] == "text/markdown; charset=utf-8")

            let json = try #require(try await perform(client, Request(path: "docs/data.json")).success)
            #expect(json.headers["content-type"] == "application/json; charset=utf-8")

            for form in ["/docs/hello.txt", "http://example.com/docs/hello.txt", "https://example.com:8443/docs/hello.txt"] {
                let same = try await perform(client, Request(path: form))
                #expect(same.success?.status == 200, "\(form): \(same)")
                #expect(same.success?.body == hello.body, "\(form)")
            }
        }
    }

    @Test("Missing file, no route, paths that escape, unknown domain")
    func chainErrors() async throws {
        try await TestCluster.with { cluster in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }

            let missing = try #require(try await perform(client, Request(path: "docs/nothing-here.txt")).failure)
            #expect(missing.code == .exhausted)
            #expect(missing.attempts.count == 1)
            #expect(missing.attempts.first?.provider == "bundle")
            #expect(missing.attempts.first?.outcome == .miss)

            let noRoute = try #require(try await perform(client, Request(path: "elsewhere/hello.txt")).failure)
            #expect(noRoute.code == .noRoute)
            #expect(noRoute.attempts.isEmpty)

            for path in ["docs/../monarch.yml", "docs/%2e%2e/monarch.yml", "docs/%2E%2E/%2e%2e/etc/passwd", "docs/hello.txt%00.png"] {
                let invalid = try #require(try await perform(client, Request(path: path)).failure, "\(path)")
                #expect(invalid.code == .invalidPath, "\(path): \(invalid)")
                #expect(invalid.attempts.isEmpty, "\(path)")
            }

            let unknown = try #require(try await perform(client, Request(path: "docs/hello.txt", domain: "nope")).failure)
            #expect(unknown.code == .unknownDomain)

            // The connection still serves after all those errors; none of them reached a worker.
            #expect(try await perform(client, Request(path: "docs/hello.txt")).success?.status == 200)
            let status = try await cluster.status(via: client)
            #expect(status.forwarded == 2)
        }
    }
}
