import Monarch
@testable import MonarchCoordinator
import MonarchLoop
import Testing

@Suite("A worker pool as a provider")
struct WorkerPoolTests {
    @Test("Only a task that prefers the pool's loop counts as running there; any task is answered on the loop")
    func tasksPreferringTheLoop() async throws {
        let loop = try EventLoop(name: "pool")
        let other = try EventLoop(name: "other")
        defer {
            _ = loop.shutdown()
            _ = other.shutdown()
        }
        let pool = WorkerPool(kind: "network", loop: loop, clock: .system)
        #expect(await Task(executorPreference: loop) { pool.runsInTaskPreferringLoop }.value)
        #expect(await Task { pool.runsInTaskPreferringLoop }.value == false)
        #expect(await Task(executorPreference: other) { pool.runsInTaskPreferringLoop }.value == false)
        // Either way the request is worked on the pool's loop (which it checks): with no
        // worker connected, it fails `unavailable`.
        for outcome in [
            await Task(executorPreference: loop) { await pool.perform(Request(path: "a")) }.value,
            await Task { await pool.perform(Request(path: "a")) }.value,
            await Task(executorPreference: other) { await pool.perform(Request(path: "a")) }.value,
        ] {
            guard case .failure(let failure) = outcome else {
                Issue.record("expected a failure, got \(outcome)")
                continue
            }
            #expect(failure.code == "unavailable")
        }
    }
}
