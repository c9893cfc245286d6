/// A wait that ran out of time: the test fails instead of hanging.
public struct TimedOut: Error, CustomStringConvertible {
    /// What was waited for.
    public var what: String
    /// How long.
    public var seconds: Double

    /// A wait for `what` that ran out after `seconds`.
    public init(what: String, seconds: Double) {
        self.what = what
        self.seconds = seconds
    }

    public var description: String { "timed out after \(seconds) s waiting for \(what)" }
}

/// Returns once `condition` holds, asking it every `interval`; throws ``TimedOut`` naming
/// `what` when it has not held within `timeout` seconds, or what `condition` throws.
public func eventually(
    _ what: String, timeout: Double = 20, every interval: Duration = .milliseconds(10),
    _ condition: () async throws -> Bool
) async throws {
    let start = ContinuousClock.now
    while try await !condition() {
        guard ContinuousClock.now - start < .seconds(timeout) else { throw TimedOut(what: what, seconds: timeout) }
        try await Task.sleep(for: interval)
    }
}
