import Synchronization

/// A wait that ran out of time: the test fails instead of hanging.
struct TimedOut: Error, CustomStringConvertible {
    var what: String
    var seconds: Double
    var description: String { "timed out after \(seconds) s waiting for \(what)" }
}

/// The result of `body`, or ``TimedOut`` after `seconds`. The body is cancelled on timeout,
/// but not waited for: a body that ignores cancellation cannot hang the test.
func within<T: Sendable>(
    _ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        let pending = Mutex<CheckedContinuation<T, any Error>?>(continuation)
        let finish: @Sendable (Result<T, any Error>) -> Bool = { result in
            let waiting = pending.withLock { slot -> CheckedContinuation<T, any Error>? in
                defer { slot = nil }
                return slot
            }
            guard let waiting else { return false }
            waiting.resume(with: result)
            return true
        }
        let work = Task {
            let result: Result<T, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            _ = finish(result)
        }
        Task {
            try? await Task.sleep(for: .seconds(seconds))
            if finish(.failure(TimedOut(what: what, seconds: seconds))) { work.cancel() }
        }
    }
}

/// Polls `check` until it holds; throws ``TimedOut`` after `timeout` seconds.
func eventually(
    _ what: String, timeout: Double = 20, every interval: Duration = .milliseconds(50),
    _ check: () async throws -> Bool
) async throws {
    let start = ContinuousClock.now
    while true {
        if try await check() { return }
        if ContinuousClock.now - start > .seconds(timeout) { throw TimedOut(what: what, seconds: timeout) }
        try await Task.sleep(for: interval)
    }
}
