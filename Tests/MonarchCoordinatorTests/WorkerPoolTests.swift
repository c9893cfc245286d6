import Monarch
@testable import MonarchCoordinator
import MonarchLoop
import Testing

@Suite("A worker pool as a provider")
struct WorkerPoolTests {
    @Test("Any task is answered on the coordinators' loop: with no worker connected, a request fails unavailable")
    func anyTaskIsAnsweredOnTheLoop() async throws {
        let pool = WorkerPool(kind: "network", clock: .system)
        let other = try EventLoop(name: "other")
        defer { _ = other.shutdown() }
        #expect(pool.loop === CoordinatorActor.loop)
        for outcome in [
            await Task(executorPreference: CoordinatorActor.loop) { await pool.perform(Request(path: "a")) }.value,
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
