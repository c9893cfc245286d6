import MonarchLoop
import Testing
@testable import MonarchCoordinator

@Suite("The coordinators' isolation")
struct CoordinatorActorTests {
    @Test("Code isolated to CoordinatorActor runs on its loop's thread, and assumeIsolated enters it from a loop callback")
    func runsOnTheLoop() async throws {
        #expect(await CoordinatorActor.run { CoordinatorActor.loop.inEventLoop })
        let entered = try await CoordinatorActor.loop.submit { CoordinatorActor.assumeIsolated { CoordinatorActor.loop.inEventLoop } }
        #expect(entered)
    }
}
