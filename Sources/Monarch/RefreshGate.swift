import Synchronization

/// The background refreshes of `cacheThenRefresh` under way, by cache key: a stale entry is
/// refreshed once, not once per request that read it while the refresh runs.
public final class RefreshGate: Sendable {
    private let state = Mutex<(running: Set<String>, started: Int)>(([], 0))

    /// A gate with no refresh under way.
    public init() {}

    /// Claims the refresh of `key`: true when none was under way (the caller refreshes, then
    /// calls ``finish(_:)``), false when one already is.
    public func begin(_ key: String) -> Bool {
        state.withLock { state in
            guard state.running.insert(key).inserted else { return false }
            state.started += 1
            return true
        }
    }

    /// Ends the refresh of `key` claimed with ``begin(_:)``.
    public func finish(_ key: String) {
        _ = state.withLock { $0.running.remove(key) }
    }

    /// Refreshes under way now.
    public var running: Int { state.withLock { $0.running.count } }

    /// Refreshes started since the gate was made.
    public var started: Int { state.withLock { $0.started } }
}
