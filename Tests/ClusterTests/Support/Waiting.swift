import Synchronization

@_exported import TestWaiting

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
