import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Monarch
import MonarchClient
import MonarchWire
import Testing

/// Starting, draining and dying: `monarch up` leaves no worker behind.
@Suite("Cluster lifecycle")
struct LifecycleTests {
    @Test("SIGTERM drains: the request in flight is answered, new ones refused, exit 0, no worker left")
    func drainOnSigterm() async throws {
        // The bundle's latency is the drain window the checks below run in: long enough for a
        // machine busy with the other suites.
        try await TestCluster.with(ClusterOptions(bundleCount: 2, latency: "5s")) { cluster in
            let inFlight = try await cluster.connect()
            let observer = try await cluster.connect()
            defer { Task { await inFlight.close(); await observer.close() } }

            let slow = Task { await outcome(inFlight, Request(path: "docs/hello.txt")) }
            var workerPids: [Int32] = []
            try await eventually("the request to reach a worker") {
                let status = try await cluster.status(via: observer)
                workerPids = status.bundleWorkers.map(\.pid)
                return status.requestsInFlight == 1 && status.inFlight == 1
            }
            #expect(workerPids.count == 2)

            cluster.up.signal(SIGTERM)
            try await eventually("the coordinator to start draining") {
                try await cluster.status(via: observer).draining
            }

            // A request on a connection made before: shuttingDown.
            let refused = try await perform(observer, Request(path: "docs/other.txt"))
            #expect(refused.failure?.code == .shuttingDown, "\(refused)")
            // A new connection: refused outright, or its request gets shuttingDown.
            do {
                let late = try await MonarchClient.connect(to: cluster.clientAddress)
                let answer = try await perform(late, Request(path: "docs/other.txt"))
                await late.close()
                #expect(answer.failure?.code == .shuttingDown, "\(answer)")
            } catch let error as MonarchError {
                guard case .transport(let transport) = error, transport.kind == .cannotConnect else {
                    Issue.record("a new connection while draining: \(error)")
                    return
                }
            }

            let answer = try await within(30, "the drained request's answer") { await slow.value }
            #expect(answer.success?.status == 200, "\(answer)")
            #expect(answer.success?.body == Data(ClusterOptions.files["docs/hello.txt"]!))

            let status = try await cluster.up.waitForExit(timeout: 30)
            #expect(status == 0, "stderr:\n\(cluster.up.stderr.text)")
            for pid in workerPids {
                try await eventually("worker \(pid) to exit", timeout: 15) { processIsGone(pid) }
            }
        }
    }

    @Test("A second signal stops at once, without waiting for the requests in flight")
    func secondSignalStopsAtOnce() async throws {
        // Drains wait up to the default deadline (30 s); the worker would answer after 120 s.
        try await TestCluster.with(ClusterOptions(bundleCount: 1, latency: "120s")) { cluster in
            // No retries: the client would otherwise send the GET again after reconnecting.
            let inFlight = try await cluster.connect(options: MonarchClient.Options(retries: 0))
            let observer = try await cluster.connect()
            defer { Task { await inFlight.close(); await observer.close() } }
            let slow = Task { await outcome(inFlight, Request(path: "docs/hello.txt")) }
            try await eventually("the request to reach a worker") {
                try await cluster.status(via: observer).inFlight == 1
            }
            cluster.up.signal(SIGTERM)
            try await eventually("the coordinator to start draining") {
                try await cluster.status(via: observer).draining
            }
            cluster.up.signal(SIGINT)
            let status = try await cluster.up.waitForExit(timeout: 20)
            #expect(status == 0, "stderr:\n\(cluster.up.stderr.text)")
            // The abandoned request ends with the connection, not with an answer.
            let answer = try await within(10, "the abandoned request to end") { await slow.value }
            #expect(answer.success == nil, "\(answer)")
        }
    }

    @Test("SIGKILL monarch up: its workers exit by themselves")
    func workersOutliveNoCoordinator() async throws {
        try await TestCluster.with(ClusterOptions(bundleCount: 2)) { cluster in
            let workerPids = try await cluster.status().bundleWorkers.map(\.pid)
            #expect(workerPids.count == 2)
            for pid in workerPids { #expect(!processIsGone(pid)) }
            cluster.up.signal(SIGKILL)
            let status = try await cluster.up.waitForExit(timeout: 15)
            #expect(status == 128 + SIGKILL)
            for pid in workerPids {
                try await eventually("orphaned worker \(pid) to exit", timeout: 15) { processIsGone(pid) }
            }
        }
    }

    @Test("A missing bundle folder: monarch up exits non-zero and says the folder does not exist")
    func missingBundleFolder() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try folder.write("monarch.yml", ClusterOptions(createBundle: false).yaml(in: folder.path))
        let up = try Spawned(Executables.monarch, ["up", "--config", folder.path + "/monarch.yml"])
        defer { up.signal(SIGKILL) }
        let status = try await up.waitForExit(timeout: 30)
        #expect(status != 0)
        #expect(!up.stdout.text.contains("ready"))
        #expect(up.stderr.text.contains("does not exist"), "stderr:\n\(up.stderr.text)")
        #expect(up.stderr.text.contains(folder.path + "/Bundle"), "stderr:\n\(up.stderr.text)")
    }

    @Test("An invalid configuration: monarch up exits non-zero and names the key path")
    func invalidConfiguration() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try folder.write("Bundle/docs/hello.txt", "hi")
        let yaml = ClusterOptions().yaml(in: folder.path)
            .replacingOccurrences(of: "  - match: \"docs/...\"\n    domain: static", with: "  - match: \"a\"\n    domain: nope")
        #expect(yaml.contains("domain: nope"))
        try folder.write("monarch.yml", yaml)
        let up = try Spawned(Executables.monarch, ["up", "--config", folder.path + "/monarch.yml"])
        defer { up.signal(SIGKILL) }
        let status = try await up.waitForExit(timeout: 30)
        #expect(status != 0)
        #expect(up.stderr.text.contains("routes[0].domain"), "stderr:\n\(up.stderr.text)")
        // Nothing was left listening.
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/c.sock"))
    }
}
