/// An event loop runs Swift concurrency jobs on its thread, in two roles kept apart so that
/// neither costs the other a thread hop:
///
/// - as a `TaskExecutor`, a task can prefer it (`Task(executorPreference: loop)`,
///   `withTaskExecutorPreference(loop)`): the task's nonisolated code runs on the loop
///   thread and touches handles directly, calling from one async function to another
///   without leaving the thread or waiting for the next pass of the loop;
/// - through ``asUnownedSerialExecutor()``, an actor can be isolated to the loop
///   (`nonisolated var unownedExecutor`), so its state lives on the loop thread.
extension EventLoop: TaskExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {
        enqueue(.taskJob(UnownedJob(job)))
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// The serial executor of actors isolated to this loop: their jobs run on the loop thread.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        actorExecutor.asUnownedSerialExecutor()
    }

    /// Runs a job of a task that prefers this loop, as nonisolated code on the loop.
    func runTaskJob(_ job: UnownedJob) {
        job.runSynchronously(on: asUnownedTaskExecutor())
    }

    /// Runs a job of an actor isolated to this loop, on the loop in both of its roles: a task
    /// that prefers the loop then finds itself on its preferred executor too, and its next
    /// hop to the same actor (an `await` of a function isolated to it, a continuation's
    /// isolation) runs at once instead of queueing a job for a later turn.
    func runActorJob(_ job: UnownedJob) {
        job.runSynchronously(isolatedTo: actorExecutor.asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
    }
}

/// The serial executor behind actors isolated to an event loop.
final class LoopActorExecutor: SerialExecutor {
    /// The loop owns this executor, which never outlives it.
    unowned let loop: EventLoop

    init(loop: EventLoop) { self.loop = loop }

    func enqueue(_ job: consuming ExecutorJob) {
        loop.enqueue(.actorJob(UnownedJob(job)))
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func checkIsolated() {
        loop.preconditionInEventLoop()
    }
}
