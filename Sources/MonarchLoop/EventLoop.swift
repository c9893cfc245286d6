import CLibUV
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One libuv event loop running on a thread of its own.
///
/// Every handle of the layer (``StreamConnection``, ``Listener``, ``LoopTimer``) belongs to
/// one loop and is touched only on that loop's thread; ``execute(_:)`` is the thread-safe way
/// in. The loop is also a `SerialExecutor` and a `TaskExecutor` (see `EventLoop+Executor`),
/// so actors and tasks can run on its thread and call handles directly.
///
/// A loop runs from `init` until ``shutdown()``; call `shutdown()` once its work is over.
public final class EventLoop: @unchecked Sendable {
    /// The libuv loop. Touch only on the loop thread.
    let uvLoop: UnsafeMutablePointer<uv_loop_t>

    /// The libuv loop as an untyped pointer, for a C library that attaches its own handles to
    /// the loop (hiredis's libuv adapter). Touch only on the loop thread, and have the library
    /// close its handles before ``shutdown()``.
    package var uvLoopPointer: UnsafeMutableRawPointer { UnsafeMutableRawPointer(uvLoop) }
    /// Wakes the loop thread when work is queued from elsewhere.
    private let wakeup: UnsafeMutablePointer<uv_async_t>
    /// Runs just before the loop waits for I/O: writes made since are flushed then, so the
    /// frames written in one pass of the loop leave in one system call per stream.
    private let flushPrepare: UnsafeMutablePointer<uv_prepare_t>
    /// Streams with buffered writes to flush before the loop next waits. Loop thread only.
    private var streamsToFlush: [StreamConnection] = []
    /// The streams being flushed now (swapped with ``streamsToFlush``, so neither array is
    /// reallocated at each pass).
    private var streamsFlushing: [StreamConnection] = []
    /// Work queued on the loop thread itself, run before the loop next waits, with no lock
    /// and no wake-up. Loop thread only.
    private var localWork: [QueuedWork] = []
    /// The round of `localWork` being run, swapped with it so that neither array's storage
    /// is made again for every round. Loop thread only.
    private var workRunning: [QueuedWork] = []
    /// Set on the loop thread when shutdown starts closing handles. Loop thread only.
    private var closingHandles = false
    /// Set on the loop thread once the loop has run its last work. Loop thread only.
    private var loopFinished = false
    /// Work queued by ``execute(_:)`` and executor jobs, run in FIFO order on the loop thread.
    private let queue = Mutex(WorkQueue())
    /// The loop thread; written once in `init` before any other thread can see the loop.
    private var thread = pthread_t()
    /// Signalled when the loop thread has left `uv_run` and closed the loop.
    private let finished = Mutex(ShutdownReport?.none)

    /// Where every stream of the loop reads into. One buffer serves them all: libuv reads one
    /// stream at a time, and each read is handed on (and copied where it is kept) before the
    /// next one starts. Loop thread only.
    let readBuffer: UnsafeMutableRawBufferPointer

    /// The loop's name, used for its thread and its logs.
    public let name: String
    /// The serial executor of actors isolated to the loop; written once in `init` before any
    /// other thread can see the loop.
    private(set) var actorExecutor: LoopActorExecutor!
    /// The loop's logger.
    public let logger: Logger

    /// Starts a new loop on a new thread named `name`.
    ///
    /// - Throws: ``UVError`` when libuv cannot initialise a loop.
    public init(name: String = "monarch-loop") throws(UVError) {
        // A peer that goes away is an error on the write, never the end of the process.
        BrokenPipes.ignoreUnlessHandled()
        // Initialised before any stored property, so a failure here never reaches deinit.
        let uvLoop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        let result = uv_loop_init(uvLoop)
        guard result >= 0 else {
            uvLoop.deallocate()
            throw UVError(code: result, operation: "initialise loop \(name)")
        }
        self.uvLoop = uvLoop
        readBuffer = .allocate(byteCount: 64 << 10, alignment: 16)
        self.name = name
        var logger = Logger(label: "monarch.loop")
        logger[metadataKey: "loop"] = "\(name)"
        self.logger = logger
        wakeup = .allocate(capacity: 1)
        flushPrepare = .allocate(capacity: 1)
        // uv_async_init cannot fail on an initialised loop.
        uv_async_init(uvLoop, wakeup) { async in
            guard let data = async?.pointee.data else { return }
            Unmanaged<EventLoop>.fromOpaque(data).takeUnretainedValue().runQueuedWork()
        }
        wakeup.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        // uv_prepare_init cannot fail either. Unreferenced: it never keeps the loop running.
        uv_prepare_init(uvLoop, flushPrepare)
        flushPrepare.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        uv_prepare_start(flushPrepare) { prepare in
            guard let data = prepare?.pointee.data else { return }
            Unmanaged<EventLoop>.fromOpaque(data).takeUnretainedValue().runBeforeWaiting()
        }
        flushPrepare.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { uv_unref($0) }
        actorExecutor = LoopActorExecutor(loop: self)
        startThread()
    }

    deinit {
        readBuffer.deallocate()
        wakeup.deallocate()
        flushPrepare.deallocate()
        uvLoop.deallocate()
    }

    /// Whether the caller runs on this loop's thread.
    public var inEventLoop: Bool { pthread_equal(pthread_self(), thread) != 0 }

    /// Stops the process when the caller is not on this loop's thread.
    public func preconditionInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        precondition(inEventLoop, "must be called on the thread of event loop \(name)", file: file, line: line)
    }

    /// Runs `work` on the loop thread, after the work queued before it from the same thread.
    /// Thread-safe, never blocks; called on the loop thread, `work` runs before the loop next
    /// waits for I/O. Work queued from another thread after ``shutdown()`` began is dropped
    /// (and logged); use ``submit(_:)`` to learn of that.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        enqueue(.closure(work))
    }

    /// Runs `work` on the loop thread and returns its result to the awaiting caller.
    ///
    /// - Throws: what `work` throws, or ``EventLoopError/shutDown(loop:)`` when the loop has
    ///   shut down and `work` never ran.
    public func submit<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let accepted = enqueue(.closure { continuation.resume(with: Result(catching: work)) })
            if !accepted { continuation.resume(throwing: EventLoopError.shutDown(loop: name)) }
        }
    }

    /// Queues work for the loop thread. Returns false, and logs, when the loop no longer
    /// takes work (shutdown has begun, or the loop has finished).
    @discardableResult
    func enqueue(_ work: QueuedWork) -> Bool {
        if inEventLoop {
            guard !loopFinished else {
                logger.error("work queued after the loop finished was dropped")
                return false
            }
            localWork.append(work)
            return true
        }
        // The wake-up is sent under the lock: once `stopping` is set the handle may be closed.
        let accepted = queue.withLock { queue -> Bool in
            guard !queue.stopping else { return false }
            queue.items.append(work)
            uv_async_send(wakeup)
            return true
        }
        if !accepted {
            logger.warning("work queued after shutdown began was dropped")
        }
        return accepted
    }

    /// Rounds of work queued on the loop thread that one pass runs before it waits for I/O.
    static let localWorkRounds = 8

    /// Runs what other threads queued so far; called on the loop thread by the wake-up
    /// handle. Work queued meanwhile sends another wake-up, so one batch a pass keeps I/O
    /// flowing under a steady stream of work.
    private func runQueuedWork() {
        let batch = queue.withLock { queue -> [QueuedWork] in
            let batch = queue.items
            queue.items.removeAll(keepingCapacity: true)
            return batch
        }
        for work in batch { run(work) }
    }

    private func run(_ work: QueuedWork) {
        switch work {
        case .closure(let body): body()
        case .taskJob(let job): runTaskJob(job)
        case .actorJob(let job): runActorJob(job)
        case .stop: closeEveryHandle()
        }
    }

    /// Asks for `stream.flush()` before the loop next waits for I/O. Loop thread only.
    func scheduleFlush(_ stream: StreamConnection) {
        streamsToFlush.append(stream)
    }

    /// Runs the work queued on the loop thread so far and flushes the streams written to;
    /// called just before the loop waits for I/O.
    ///
    /// Work that this work queues runs too, for up to ``localWorkRounds`` rounds: a frame read
    /// resumes a task that starts another, and a wake-up of the loop by itself for the second
    /// would cost three system calls and a pass. What is still queued after the last round
    /// runs in the next pass, which then does not wait, so a task that keeps yielding cannot
    /// starve I/O.
    private func runBeforeWaiting() {
        var rounds = 0
        while !localWork.isEmpty, rounds < Self.localWorkRounds {
            rounds += 1
            swap(&localWork, &workRunning)
            for item in workRunning { run(item) }
            workRunning.removeAll(keepingCapacity: true)
        }
        while !streamsToFlush.isEmpty {
            swap(&streamsToFlush, &streamsFlushing)
            for stream in streamsFlushing { stream.flush() }
            streamsFlushing.removeAll(keepingCapacity: true)
        }
        if !localWork.isEmpty && !closingHandles {
            passesWakingItself += 1
            uv_async_send(wakeup)
        }
    }

    /// Passes that ended with work still queued on the loop thread, so that the loop woke
    /// itself rather than wait for I/O. Loop thread only; for tests.
    package private(set) var passesWakingItself = 0

    // MARK: - Shutdown

    /// What the loop found when it shut down.
    public struct ShutdownReport: Sendable, Equatable {
        /// Handles still open when shutdown began (each was then closed). Zero when every
        /// owner closed its handles itself.
        public var handlesLeftOpen: Int
        /// Whether `uv_loop_close` succeeded: every handle and request had finished.
        public var loopClosed: Bool
    }

    /// Closes every handle still open, waits for the loop thread to finish and reports what it
    /// found. Blocks the caller; must not be called on the loop thread. Calling it again
    /// returns the same report.
    @discardableResult
    public func shutdown() -> ShutdownReport {
        precondition(!inEventLoop, "shutdown() would wait for its own thread")
        let first = queue.withLock { queue -> Bool in
            if queue.stopping { return false }
            queue.items.append(.stop)
            queue.stopping = true
            uv_async_send(wakeup)
            return true
        }
        if first {
            pthread_join(thread, nil)
        }
        // A second caller may arrive while the first still waits for the thread.
        while true {
            if let report = finished.withLock({ $0 }) { return report }
            sched_yield()
        }
    }

    /// Handles found open by ``closeEveryHandle()``; written and read on the loop thread.
    private var handlesLeftOpen = 0

    /// Closes every handle on the loop, the wake-up handle last, so that `uv_run` returns.
    /// Work queued before the stop marker has run: whatever is open now was left open by its
    /// owner, so it is counted, logged and closed through its owner's close path.
    private func closeEveryHandle() {
        final class Walk {
            let own: [UnsafeMutableRawPointer]
            var open: [UnsafeMutablePointer<uv_handle_t>] = []
            init(own: [UnsafeMutableRawPointer]) { self.own = own }
        }
        runBeforeWaiting()
        closingHandles = true
        let walk = Walk(own: [UnsafeMutableRawPointer(wakeup), UnsafeMutableRawPointer(flushPrepare)])
        withExtendedLifetime(walk) {
            uv_walk(uvLoop, { handle, arg in
                guard let handle, let arg else { return }
                let walk = Unmanaged<Walk>.fromOpaque(arg).takeUnretainedValue()
                if uv_is_closing(handle) == 0 && !walk.own.contains(UnsafeMutableRawPointer(handle)) {
                    walk.open.append(handle)
                }
            }, Unmanaged.passUnretained(walk).toOpaque())
        }
        handlesLeftOpen = walk.open.count
        if !walk.open.isEmpty {
            let kinds = walk.open.map { String(cString: uv_handle_type_name(uv_handle_get_type($0))) }
            logger.warning("closing \(walk.open.count) handle(s) left open at shutdown: \(kinds.joined(separator: ", "))")
        }
        for handle in walk.open {
            if let owner = handle.pointee.data {
                Unmanaged<LoopHandle>.fromOpaque(owner).takeUnretainedValue().close()
            } else {
                uv_close(handle, nil)
            }
        }
        flushPrepare.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { uv_close($0, nil) }
        wakeup.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { uv_close($0, nil) }
    }

    private func startThread() {
        let box = Unmanaged.passRetained(ThreadStart(loop: self))
        var started = pthread_t()
        let result = pthread_create(&started, nil, { arg in
            let start = Unmanaged<ThreadStart>.fromOpaque(arg!).takeRetainedValue()
            start.loop.runOnThread()
            return nil
        }, box.toOpaque())
        precondition(result == 0, "pthread_create failed: \(result)")
        thread = started
    }

    private func runOnThread() {
        monarch_name_current_thread(name)
        uv_run(uvLoop, UV_RUN_DEFAULT)
        // Close callbacks during shutdown may have resumed tasks on this loop (a sender
        // waiting for writability, a task awaiting a close): let them finish.
        while !localWork.isEmpty || !streamsToFlush.isEmpty {
            runBeforeWaiting()
            uv_run(uvLoop, UV_RUN_NOWAIT)
        }
        loopFinished = true
        let closed = uv_loop_close(uvLoop) == 0
        if !closed { logger.error("uv_loop_close failed: requests or handles were still active") }
        let report = ShutdownReport(handlesLeftOpen: handlesLeftOpen, loopClosed: closed)
        finished.withLock { $0 = report }
    }
}

/// Why an event loop could not do what was asked.
public enum EventLoopError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The loop has shut down; the work never ran.
    case shutDown(loop: String)

    public var description: String {
        switch self {
        case .shutDown(let loop): "event loop \(loop) has shut down"
        }
    }
}

/// What the loop thread runs: a closure, a job of a task preferring the loop, a job of an
/// actor isolated to it, or the stop marker.
enum QueuedWork {
    case closure(@Sendable () -> Void)
    case taskJob(UnownedJob)
    case actorJob(UnownedJob)
    case stop
}

/// The loop's queue of work from other threads.
struct WorkQueue: ~Copyable {
    var items: [QueuedWork] = []
    var stopping = false
}

private final class ThreadStart {
    let loop: EventLoop
    init(loop: EventLoop) { self.loop = loop }
}
