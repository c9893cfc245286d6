import Monarch
@testable import MonarchClient
import MonarchWire
import Testing

/// One watch's changes on their way to the tasks iterating it.
@Suite struct WatchChannelTests {
    /// Waits for `body` to end, for at most 10 s; false when it did not (a task left hanging).
    private func ends(_ body: @escaping @Sendable () async -> Void) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await body()
                return true
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return false
            }
            let first = await group.next()!
            group.cancelAll()
            return first
        }
    }

    private func waitUntil(_ condition: @Sendable () -> Bool) async throws {
        for _ in 0..<10_000 where !condition() { try await Task.sleep(for: .milliseconds(1)) }
        #expect(condition())
    }

    @Test("Tasks iterating one watch at once take turns for its changes, and all end when it ends")
    func severalIteratorsTakeTurns() async throws {
        let channel = WatchChannel(watchID: 1, target: .key("k"), limit: 8)
        let first = Task { await channel.next() }
        let second = Task { await channel.next() }
        try await waitUntil { channel.waitingTasks == 2 }
        channel.push(CacheChange(kind: .stored, key: "k"))
        try await waitUntil { channel.waitingTasks == 1 }
        channel.finish()
        let answers = await ends {
            let got = [await first.value, await second.value]
            #expect(got.compactMap(\.?.kind) == [.stored], "one task got the change, the other the end: \(got)")
        }
        #expect(answers, "a task iterating the watch was left waiting")
    }

    @Test("Cancelling one task's wait leaves the others waiting for the next change")
    func cancellingOneIteratorLeavesTheOthers() async throws {
        let channel = WatchChannel(watchID: 1, target: .key("k"), limit: 8)
        let cancelled = Task { await channel.next() }
        try await waitUntil { channel.waitingTasks == 1 }
        let staying = Task { await channel.next() }
        try await waitUntil { channel.waitingTasks == 2 }
        cancelled.cancel()
        let cancelledEnded = await ends {
            let value = await cancelled.value
            #expect(value == nil)
        }
        #expect(cancelledEnded)
        try await waitUntil { channel.waitingTasks == 1 }
        channel.push(CacheChange(kind: .invalidated, key: "k"))
        let stayingEnded = await ends {
            let value = await staying.value
            #expect(value?.kind == .invalidated)
        }
        #expect(stayingEnded)
    }
}
