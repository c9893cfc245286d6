import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Monarch
import MonarchClient
import MonarchLoop
import MonarchTransport
import MonarchWire
import Testing

/// A worker killed mid-request costs only that attempt, and the supervisor replaces it.
@Suite("Worker loss")
struct WorkerLossTests {
    @Test("SIGKILL a worker mid-request: the request is retried, answered once; a replacement registers")
    func workerKilledMidRequest() async throws {
        // Every answer takes 4 s: long enough that the request is still in flight when a loaded
        // machine's status poll finds the worker holding it.
        try await TestCluster.with(ClusterOptions(bundleCount: 2, latency: "4s")) { cluster in
            let observer = try await cluster.connect()
            defer { Task { await observer.close() } }
            let before = try await cluster.status(via: observer)
            #expect(before.bundleWorkers.count == 2)

            var victimPid: Int32 = -1
            let loop = try EventLoop(name: "raw-client")
            defer { _ = loop.shutdown() }
            let address = cluster.clientAddress
            let raw = try await within(20, "connecting") { try await AsyncFrameConnection.connect(to: address, on: loop) }
            do {
                try await raw.send(.hello(Hello(role: .client)))
                let welcome = try await within(20, "welcome") { try await raw.nextMessage() }
                guard case .welcome? = welcome else {
                    Issue.record("expected welcome, got \(String(describing: welcome))")
                    await raw.close()
                    return
                }
                try await raw.send(.request(RequestMessage(id: 1, path: "docs/hello.txt")))

                var busy: WorkerStatus?
                try await eventually("a worker to take the request") {
                    busy = try await cluster.status(via: observer).bundleWorkers.first { $0.inFlight == 1 }
                    return busy != nil
                }
                let victim = try #require(busy)
                victimPid = victim.pid
                #expect(kill(victim.pid, SIGKILL) == 0)

                let answer = try await within(30, "the answer to request 1") { try await raw.nextMessage() }
                guard case .response(let response)? = answer else {
                    Issue.record("expected a response, got \(String(describing: answer))")
                    await raw.close()
                    return
                }
                #expect(response.id == 1)
                #expect(response.status == 200)
                #expect(response.body == Data(ClusterOptions.files["docs/hello.txt"]!))

                // Exactly one answer: the next message after the response is the pong.
                try await raw.send(.ping(PingMessage(id: 2)))
                let next = try await within(20, "the pong") { try await raw.nextMessage() }
                #expect(next == .pong(PongMessage(id: 2)))
            } catch {
                await raw.close()
                throw error
            }
            await raw.close()

            // The lost worker left the pool; the supervisor starts another after its back-off.
            try await eventually("a replacement worker to register", timeout: 30) {
                let workers = try await cluster.status(via: observer).bundleWorkers
                return workers.count == 2 && !workers.contains { $0.pid == victimPid }
            }
            let after = try await cluster.status(via: observer)
            #expect(Set(before.bundleWorkers.map(\.pid)).subtracting(after.bundleWorkers.map(\.pid)) == [victimPid])
            // The replacement registers under the name of the worker it replaces (bundle-1 stays bundle-1).
            #expect(Set(after.bundleWorkers.map(\.id)) == ["bundle-1", "bundle-2"])
            #expect(after.bundleWorkers.map(\.id).sorted() == before.bundleWorkers.map(\.id).sorted())
            // The new worker serves.
            let served = try await perform(observer, Request(path: "docs/other.txt"))
            #expect(served.success?.status == 200, "\(served)")
        }
    }

    @Test("A worker whose restart fails is tried again with back-off, and comes back once it can start")
    func failedRestartIsRetried() async throws {
        // A folder of executables of its own, hard links to the build's (never copies: a copy
        // open for writing while another test forks cannot be run, ETXTBSY): `monarch` finds
        // its workers beside it, and the test can take the bundle worker's name away and back.
        let bin = try TemporaryFolder()
        defer { bin.remove() }
        let monarch = bin.path + "/monarch"
        let worker = bin.path + "/monarch-bundle-worker"
        try #require(link(Executables.monarch, monarch) == 0, "hard link: errno \(errno)")
        try #require(link(Executables.bundleWorker, worker) == 0, "hard link: errno \(errno)")
        var options = ClusterOptions()
        options.monarch = monarch
        try await TestCluster.with(options) { cluster in
            let first = try #require(try await cluster.status().bundleWorkers.first)
            #expect(rename(worker, worker + ".away") == 0)
            #expect(kill(first.pid, SIGKILL) == 0)
            try await eventually("a failed restart", timeout: 20) { cluster.up.stderr.text.contains("could not start") }
            #expect(rename(worker + ".away", worker) == 0)
            try await eventually("the worker to come back", timeout: 30) {
                let workers = try await cluster.status().bundleWorkers
                return workers.count == 1 && workers[0].pid != first.pid
            }
            let client = try await cluster.connect()
            let served = try await perform(client, Request(path: "docs/hello.txt"))
            #expect(served.success?.status == 200, "\(served)")
            await client.close()
        }
    }
}
