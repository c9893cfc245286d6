import Foundation
import Monarch
import MonarchClient
import MonarchWire
import Testing

/// Identical reads in flight share one trip to the workers.
@Suite("Coalescing")
struct CoalescingTests {
    @Test("Ten identical requests from several clients and pipelined on one make one trip")
    func identicalRequestsShareATrip() async throws {
        try await TestCluster.with(ClusterOptions(bundleCount: 1, latency: "1500ms")) { cluster in
            var clients: [MonarchClient] = []
            for _ in 0..<3 { clients.append(try await cluster.connect()) }
            let all = clients
            defer { Task { for client in all { await client.close() } } }

            // 4 pipelined on the first connection, 3 on each of the others.
            let assignment = [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]
            let results = try await withThrowingTaskGroup(of: Result<Response, ChainError>.self) { group in
                for index in assignment {
                    group.addTask { try await perform(all[index], Request(path: "docs/hello.txt")) }
                }
                var results: [Result<Response, ChainError>] = []
                for try await result in group { results.append(result) }
                return results
            }
            #expect(results.count == 10)
            for result in results {
                #expect(result.success?.status == 200, "\(result)")
                #expect(result.success?.body == Data(ClusterOptions.files["docs/hello.txt"]!))
            }
            var status = try await cluster.status(via: clients[0])
            #expect(status.forwarded == 1)
            #expect(status.tripsStarted == 1)
            #expect(status.tripsJoined == 9)

            // Another path, a query item, a query in the path, another policy: five separate trips at once.
            let variants = [
                Request(path: "docs/hello.txt"),
                Request(path: "docs/hello.txt", query: [QueryItem(name: "v", value: "1")]),
                Request(path: "docs/hello.txt?v=2"),
                Request(path: "docs/other.txt"),
                Request(path: "docs/hello.txt", policy: .noCache),
            ]
            let answers = try await withThrowingTaskGroup(of: Result<Response, ChainError>.self) { group in
                for request in variants {
                    group.addTask { try await perform(all[1], request) }
                }
                var answers: [Result<Response, ChainError>] = []
                for try await answer in group { answers.append(answer) }
                return answers
            }
            for answer in answers { #expect(answer.success?.status == 200, "\(answer)") }
            status = try await cluster.status(via: clients[0])
            #expect(status.forwarded == 6)
            #expect(status.tripsStarted == 6)
            #expect(status.tripsJoined == 9)
        }
    }
}
