import Synchronization

/// Work that no caller waits for — write-backs to caches, background refreshes — bounded in
/// number, counted, and finished or cancelled when its owner stops.
///
/// At most ``limit`` tasks run at once; work started beyond that is dropped (and counted in
/// ``dropped``), never queued, so a burst cannot grow memory without bound. After
/// ``drain(timeout:)`` begins, no new work starts. Any thread.
public final class BackgroundWork: Sendable {
    /// The largest number of tasks running at once.
    public let limit: Int

    private struct State {
        var tasks: [Int: Task<Void, Never>] = [:]
        var nextID = 0
        var started = 0
        var dropped = 0
        var closed = false
        var impatient = false
    }

    private let state = Mutex(State())

    /// Background work of at most `limit` tasks at once (1024 unless given).
    public init(limit: Int = 1024) {
        precondition(limit >= 0, "a limit of background tasks cannot be negative")
        self.limit = limit
    }

    /// Runs `work` in a task of its own, unless ``limit`` tasks run already or a drain has
    /// begun: then nothing runs and the call returns false.
    @discardableResult
    public func start(_ work: @escaping @Sendable () async -> Void) -> Bool {
        state.withLock { state in
            guard !state.closed, state.tasks.count < limit else {
                state.dropped += 1
                return false
            }
            let id = state.nextID
            state.nextID += 1
            state.started += 1
            // The task needs the lock to remove itself, so it is recorded before it can end.
            state.tasks[id] = Task { [self] in
                await work()
                _ = self.state.withLock { $0.tasks.removeValue(forKey: id) }
            }
            return true
        }
    }

    /// Tasks running now.
    public var running: Int { state.withLock { $0.tasks.count } }
    /// Tasks started since this value was made.
    public var started: Int { state.withLock { $0.started } }
    /// Work not started because ``limit`` tasks were running, or a drain had begun.
    public var dropped: Int { state.withLock { $0.dropped } }

    /// Takes no more work, waits up to `timeout` for the running tasks to end (less once
    /// ``stopWaiting()`` was called), then cancels those still running and waits for them to
    /// return. Any task.
    public func drain(timeout: Duration) async {
        state.withLock { $0.closed = true }
        let start = ContinuousClock.now
        while state.withLock({ !$0.tasks.isEmpty && !$0.impatient }), ContinuousClock.now - start < timeout {
            try? await Task.sleep(for: .milliseconds(10))
        }
        let left = state.withLock { Array($0.tasks.values) }
        for task in left { task.cancel() }
        for task in left { await task.value }
    }

    /// Makes a ``drain(timeout:)`` under way, or to come, cancel the running tasks at once
    /// instead of waiting for them (the owner is stopping now). Any thread.
    public func stopWaiting() {
        state.withLock { $0.impatient = true }
    }
}
