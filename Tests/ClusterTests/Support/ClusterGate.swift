import Foundation

/// How many clusters the tests of this process run at once: each is a coordinator and its
/// worker processes, and the waits of a test (20 s for what takes milliseconds) hold only
/// while the machine is not running every cluster test's processes at the same moment. A test
/// already holding a turn (a cluster inside a cluster) takes no second one, so nesting cannot
/// deadlock.
actor ClusterGate {
    /// The gate every cluster of the test process goes through: two clusters per core (with
    /// four, clusters of two dozen workers left the rest of a full run's tasks waiting for
    /// seconds, and their waits ran out).
    static let shared = ClusterGate(limit: 2 * max(1, ProcessInfo.processInfo.activeProcessorCount))

    /// Whether the current task holds a turn.
    @TaskLocal static var holdsTurn = false

    private let limit: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    private init(limit: Int) { self.limit = limit }

    /// Runs `body` in a turn of its own (or in the caller's, when it holds one).
    static func inTurn<T>(_ body: () async throws -> T) async throws -> T {
        if holdsTurn { return try await body() }
        await shared.enter()
        do {
            let result = try await $holdsTurn.withValue(true) { try await body() }
            await shared.leave()
            return result
        } catch {
            await shared.leave()
            throw error
        }
    }

    private func enter() async {
        if running < limit {
            running += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func leave() {
        if waiting.isEmpty {
            running -= 1
        } else {
            // The turn passes straight to the longest waiter.
            waiting.removeFirst().resume()
        }
    }
}
