// monarch-example: the client library from the first request to a mutation that refreshes a
// query, against a running cluster (Examples/monarch.yml, with Examples/origin.py as its
// upstream on 127.0.0.1:8081).
import ArgumentParser
import Monarch
import MonarchClient
import MonarchLoop
import MonarchQuery
import MonarchWire

/// A user as `data/users/1.json` holds it.
struct User: Decodable, Sendable {
    var id: Int
    var name: String
}

/// The bundle's user 1: a typed request.
struct FirstUser: MonarchRequest {
    typealias Response = User
    var path: String { "data/users/1.json" }
    var previewData: User { User(id: 1, name: "Preview User") }
}

/// The origin's counter, `{"value": N}`.
struct Count: Codable, Sendable, Equatable { var value: Int }

/// Reads the counter through the `api` domain (the cache, then the origin).
struct CurrentCount: MonarchRequest {
    typealias Response = Count
    var path: String { "api/counter" }
    var domain: RequestDomain { "api" }
    var previewData: Count { Count(value: 0) }
}

/// Adds one to the counter: a POST, never cached, never sent twice.
struct Increment: MonarchRequest {
    typealias Response = Count
    var path: String { "api/counter" }
    var method: String { "POST" }
    var domain: RequestDomain { "api" }
    var body: RequestBody? { .json(["by": 1]) }
    var previewData: Count { Count(value: 1) }
}

@main
struct ClientExample: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monarch-example",
        abstract: "Typed requests, a query and a mutation that refreshes it, against a running cluster.")

    @Option(help: "The coordinator: unix:PATH or tcp:HOST:PORT (default: MONARCH_ADDRESS, else unix:.monarch/monarch.sock).")
    var address: String?

    @Flag(help: "Use the preview service instead of a cluster: every answer is the request's preview data (so the increment changes nothing).")
    var preview = false

    func run() async throws {
        let service: any MonarchService
        if preview {
            service = MonarchPreview()
        } else {
            let text = address ?? ProcessSetup.environment("MONARCH_ADDRESS") ?? "unix:.monarch/monarch.sock"
            service = try await MonarchClient.connect(to: SocketAddress(parsing: text))
        }

        // 1. A typed request: the body decoded, or a MonarchError to switch on.
        let user = try await service.perform(FirstUser())
        print("user: \(user.name)")

        // 2. A query: its state is shared by every query of the same key in this process.
        let queries = QueryClient(service: service)
        let count = queries.query(CurrentCount())
        print("count: \(try await count.value().value)")

        // 3. A mutation that invalidates the counter's key: the cluster's cached copy is
        //    dropped and the live query refetches before `perform` returns.
        let increment = queries.mutation(Increment.self) { _ in [.key(QueryKey(path: "api/counter", domain: "api"))] }
        let after = try await increment.perform(Increment())
        print("incremented to: \(after.value)")
        print("the query now holds: \(count.state.value?.value ?? -1)")
        if preview {
            // Nothing was sent anywhere: the mutation's answer is Increment's previewData, and
            // the query's refetch answered CurrentCount's (0) again.
            print("(a preview: every answer is its request's previewData, so nothing was incremented)")
        }

        if let client = service as? MonarchClient { await client.close() }
    }
}
