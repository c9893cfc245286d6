#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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

    @Test("A task that prefers the loop, once in CoordinatorActor, stays: a continuation's body runs in the same job, before work queued meanwhile")
    func noHopBackIntoTheActor() async {
        let probe = await CoordinatorActor.run { QueueingProbe() }
        for _ in 0..<20 {
            let sawQueuedWork = await Task(executorPreference: CoordinatorActor.loop) { await probe.queueThenWait() }.value
            #expect(!sawQueuedWork, "the continuation's body ran after work queued before it: the task hopped")
        }
    }
}

extension CoordinatorActorTests {
    @Test("No coordinator state is checked at run time: the coordinator's sources use no LoopBound")
    func noLoopBoundInTheCoordinator() throws {
        let sources = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "Sources/MonarchCoordinator")
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        #expect(files.count > 50, "the coordinator's sources are where this test looks: \(sources.path)")
        for file in files {
            let code = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
                .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
            let uses = code.filter { $0.contains("LoopBound") }
            #expect(uses.isEmpty, "\(file.lastPathComponent) keeps state in a LoopBound: \(uses)")
        }
    }
}

/// Queues work on the loop, then waits on a continuation whose body records whether that work
/// ran first (it would when the wait began with a hop to a later job).
@CoordinatorActor
private final class QueueingProbe {
    private var queuedWorkRan = false

    func queueThenWait() async -> Bool {
        queuedWorkRan = false
        CoordinatorActor.loop.execute { [self] in CoordinatorActor.assumeIsolated { queuedWorkRan = true } }
        return await withCheckedContinuation { continuation in continuation.resume(returning: queuedWorkRan) }
    }
}
