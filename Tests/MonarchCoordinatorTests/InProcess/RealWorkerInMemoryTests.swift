import Foundation
import Logging
import Monarch
import MonarchBundle
@testable import MonarchCoordinator
import MonarchTransport
import MonarchWire
import MonarchWorker
import Testing

/// A real worker — the ``WorkerRuntime`` and a real provider, as `monarch-bundle-worker` runs
/// them — attached to an in-process coordinator over the transport seam: no socket, no process.
@Suite("A real worker in memory")
struct RealWorkerInMemoryTests {
    @Test("A bundle worker's runtime, attached in memory, serves a client's requests from its folder; its end's close is the worker's loss", .timeLimit(.minutes(1)))
    func bundleWorkerOverMemory() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("monarch-real-worker-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data("the guide, from a file".utf8).write(to: URL(fileURLWithPath: folder + "/guide.txt"))

        try await InProcessCluster.with(InMemoryWorkerTests.bundleDocs) { cluster in
            let store = try await BundleStore(root: folder, on: cluster.loop)
            let identity = WorkerIdentity(kind: "bundle", name: "bundle-real")
            let runtime = WorkerRuntime(
                identity: identity, provider: BundleProvider(store: store), loop: cluster.loop,
                logger: Logger(label: "real-worker"))
            let connection = try await CoordinatorActor.run {
                AsyncMessageConnection(try cluster.coordinator.attachInMemoryWorker(identity.hello(pid: 1)))
            }
            // The coordinator took the hello as it attached the worker: the runtime says none.
            let serving = Task { try await runtime.serve(over: connection, coordinator: "in-process", greeting: false) }
            try await eventually("the worker registered and welcomed") {
                await CoordinatorActor.run { cluster.coordinator.pools["bundle"]?.workers.count } == 1
                    && runtime.counters.requests == 0 && runtime.limits == AnswerLimits(maxFrameBytes: 16 << 20)
            }

            let client = try await cluster.client()
            try await client.send(RequestMessage(id: 1, path: "guide.txt"))
            try await client.send(RequestMessage(id: 2, path: "nowhere.txt"))
            #expect(text(try await client.answer(1)) == "the guide, from a file")
            let missing = try await client.answer(2)
            #expect(code(missing) == .exhausted, "a miss at the only provider: \(missing)")
            #expect(runtime.counters.responses == 1 && runtime.counters.misses == 1)

            connection.close()
            try await serving.value
            try await eventually("the coordinator lost the worker") {
                await CoordinatorActor.run { cluster.coordinator.pools["bundle"]?.workers.count } == 0
            }
        }
    }
}
