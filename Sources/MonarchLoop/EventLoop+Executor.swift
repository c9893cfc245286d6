/// An event loop runs Swift concurrency jobs on its thread: as a `SerialExecutor` an actor
/// can be isolated to the loop (`unownedExecutor`), and as a `TaskExecutor` a task can prefer
/// it (`withTaskExecutorPreference(loop)`), so async code touches handles with no thread hop.
extension EventLoop: SerialExecutor, TaskExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {
        enqueue(.job(UnownedJob(job)))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    public func checkIsolated() {
        preconditionInEventLoop()
    }

    public func isSameExclusiveExecutionContext(other: EventLoop) -> Bool {
        self === other
    }

    /// Runs one job on the loop thread, isolated to the loop and preferring it as task executor.
    func runJob(_ job: UnownedJob) {
        job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
    }
}
