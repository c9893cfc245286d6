import Monarch
@testable import MonarchClient
import MonarchWire
import Testing

/// One watch's changes on their way to the tasks iterating it.
@Suite struct WatchChannelTests {
    /// Waits for `body` to end, for at most 10 s; false when it did not (a task left hanging,
    /// which is not waited for).
    private func ends(_ body: @escaping @Sendable () async -> Void) async -> Bool {
        (try? await within(10, "the tasks to end") {
            await body()
            return true
        }) ?? false
    }

    @Test("Tasks iterating one watch at once take turns for its changes, and all end when it ends")
    func severalIteratorsTakeTurns() async throws {
        let channel = WatchChannel(watchID: 1, target: .key("k"), limit: 8)
        let first = Task { await channel.next() }
        let second = Task { await channel.next() }
        try await eventually("2 waiting task(s)", every: .milliseconds(1)) { channel.waitingTasks == 2 }
        channel.push(CacheChange(kind: .stored, key: "k"))
        try await eventually("1 waiting task(s)", every: .milliseconds(1)) { channel.waitingTasks == 1 }
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
        try await eventually("1 waiting task(s)", every: .milliseconds(1)) { channel.waitingTasks == 1 }
        let staying = Task { await channel.next() }
        try await eventually("2 waiting task(s)", every: .milliseconds(1)) { channel.waitingTasks == 2 }
        cancelled.cancel()
        let cancelledEnded = await ends {
            let value = await cancelled.value
            #expect(value == nil)
        }
        #expect(cancelledEnded)
        try await eventually("1 waiting task(s)", every: .milliseconds(1)) { channel.waitingTasks == 1 }
        channel.push(CacheChange(kind: .invalidated, key: "k"))
        let stayingEnded = await ends {
            let value = await staying.value
            #expect(value?.kind == .invalidated)
        }
        #expect(stayingEnded)
    }
}
