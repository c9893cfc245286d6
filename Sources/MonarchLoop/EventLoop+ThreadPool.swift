import CLibUV

extension EventLoop {
    /// Runs blocking `work` (file system calls, …) on libuv's thread pool, never on the loop
    /// thread, and returns its result.
    ///
    /// - Throws: ``EventLoopError/shutDown(loop:)`` when the loop no longer takes work, and
    ///   `work` never ran.
    public func runOnThreadPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let accepted = enqueue(.closure { [self] in
                let job = ThreadPoolJob {
                    let result = work()
                    return { continuation.resume(returning: result) }
                }
                let request = UnsafeMutablePointer<uv_work_t>.allocate(capacity: 1)
                request.initialize(to: uv_work_t())
                request.pointee.data = Unmanaged.passRetained(job).toOpaque()
                let queued = uv_queue_work(uvLoop, request, { request in
                    guard let request else { return }
                    Unmanaged<ThreadPoolJob>.fromOpaque(request.pointee.data).takeUnretainedValue().run()
                }, { request, _ in
                    guard let request else { return }
                    let job = Unmanaged<ThreadPoolJob>.fromOpaque(request.pointee.data).takeRetainedValue()
                    request.deallocate()
                    job.finish()
                })
                if queued != 0 {
                    Unmanaged<ThreadPoolJob>.fromOpaque(request.pointee.data).release()
                    request.deallocate()
                    continuation.resume(throwing: UVError(code: queued, operation: "queue work on the thread pool"))
                }
            })
            if !accepted { continuation.resume(throwing: EventLoopError.shutDown(loop: name)) }
        }
    }
}

/// One piece of thread-pool work: `body` runs on a pool thread and returns what the loop
/// thread then runs. A job is touched by one thread at a time (libuv orders the two calls).
private final class ThreadPoolJob: @unchecked Sendable {
    private let body: @Sendable () -> @Sendable () -> Void
    private var completion: (@Sendable () -> Void)?

    init(_ body: @escaping @Sendable () -> @Sendable () -> Void) { self.body = body }

    /// On a pool thread.
    func run() { completion = body() }

    /// On the loop thread, after ``run()`` (jobs are never cancelled, so `run` always ran).
    func finish() { completion?() }
}
