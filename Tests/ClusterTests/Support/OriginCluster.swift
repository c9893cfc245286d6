import Foundation
import Monarch
import MonarchClient
import MonarchWire
import TestOrigins

/// A cluster whose `api` domain is [cache, network] in front of the test origin
/// (`api/...` → the origin, cached without expiry), and whose `static` domain is the bundle
/// (`docs/...`, `data/...`).
func clientOriginConfig(origin: TestServerProcess) -> ClusterOptions {
    ClusterOptions(custom: """
        domains:
          api: [cache, network]
          static: [bundle]
        routes:
          - match: "api/..."
            domain: api
            upstream: http://127.0.0.1:\(origin.port)/...
          - match: "docs/..."
            domain: static
          - match: "data/..."
            domain: static
        workers:
          cache: { count: 1, memory: 8MB }
          network: { count: 1, allow: ["\(origin.allowEntry)"] }
          bundle: { count: 1, root: Bundle }

        """)
}

/// Runs `body` with the test origin and a cluster in front of it (see ``clientOriginConfig(origin:)``).
func withClientOriginCluster(_ body: (TestCluster, TestServerProcess) async throws -> Void) async throws {
    try await TestServerProcess.withOrigin { origin in
        try await TestCluster.with(clientOriginConfig(origin: origin)) { cluster in
            for (path, bytes) in ClusterOptions.files { try cluster.folder.write("Bundle/" + path, bytes) }
            try await body(cluster, origin)
        }
    }
}

/// `{"value": N}` from the origin's `/counter`.
struct Counter: Codable, Sendable, Equatable { var value: Int }

/// `GET api/counter`, typed.
struct CounterRequest: MonarchRequest {
    typealias Response = Counter
    var policy: CachePolicy?
    var path: String { "api/counter" }
    var domain: RequestDomain { "api" }
    var previewData: Counter { Counter(value: -1) }
}

/// `POST api/counter`: adds one.
struct IncrementRequest: MonarchRequest {
    typealias Response = Counter
    var path: String { "api/counter" }
    var method: String { "POST" }
    var domain: RequestDomain { "api" }
    var body: RequestBody? { .json(["by": 1]) }
    var previewData: Counter { Counter(value: -1) }
}

/// The error `body` throws, nil when it answers.
func monarchError<T: Sendable>(_ body: @Sendable () async throws(MonarchError) -> T) async -> MonarchError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}
