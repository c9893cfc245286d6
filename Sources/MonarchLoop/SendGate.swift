import Synchronization

/// The senders' side of a connection for async code: writes from any task, in order per task,
/// held back while the connection does not take more.
///
/// A send from the loop thread writes at once, or first waits (on the loop, cancellably) while
/// the connection is not writable. A send from another thread hands its write to the loop
/// without waiting while the connection is open and writable and the bytes handed over and not
/// yet written stay under ``highWatermark``; otherwise it hops onto the loop (behind the writes
/// queued before it) and waits there. The owner reports what the loop sees:
/// ``writabilityChanged(_:)`` and ``ended(throwing:)``.
public final class SendGate: Sendable {
    /// The connection's loop.
    public let loop: EventLoop
    /// Bytes in transit (handed to the loop, not yet written) at or above which senders on
    /// other threads hop onto the loop instead.
    public let highWatermark: Int

    /// Whether the connection is open and writable, read on the loop thread.
    private let isOpenOnLoop: @Sendable () -> Bool
    private let isWritableOnLoop: @Sendable () -> Bool
    /// Mirrors the connection's writability and openness for senders on other threads.
    private let writable = Atomic<Bool>(true)
    private let open = Atomic<Bool>(true)
    /// Bytes handed to the loop by senders on other threads and not yet written.
    private let bytesInTransit = Atomic<Int>(0)
    /// Senders waiting for writability, by ticket; touched on the loop thread only.
    private let waitingSenders: LoopBound<[Int: CheckedContinuation<Void, any Error>]>
    private let nextTicket = Atomic<Int>(0)

    /// A gate for a connection on `loop`, open and writable until told otherwise; `isOpen` and
    /// `isWritable` read the connection's state on the loop thread.
    public init(
        loop: EventLoop, highWatermark: Int, isOpen: @escaping @Sendable () -> Bool,
        isWritable: @escaping @Sendable () -> Bool
    ) {
        self.loop = loop
        self.highWatermark = highWatermark
        self.isOpenOnLoop = isOpen
        self.isWritableOnLoop = isWritable
        self.waitingSenders = LoopBound([:], loop: loop)
    }

    /// Whether a write may be made at once, with no wait: the caller is on the loop thread and
    /// the connection is open and writable.
    public var canWriteAtOnce: Bool {
        loop.inEventLoop && isOpenOnLoop() && isWritableOnLoop()
    }

    /// Runs `write` with `target` (`bytes` long) on the loop once the connection takes it,
    /// after the writes sent before it from the same task; from another thread, returns once it
    /// is queued for the loop (an error `write` throws there is dropped: check what may fail
    /// beforehand). `target` is passed rather than captured so that a caller's closure is used
    /// as it is, with no closure around it.
    ///
    /// - Throws: `closed` when the connection has ended, what `write` throws on the loop
    ///   thread, ``EventLoopError/shutDown(loop:)`` when the loop takes no more work,
    ///   `CancellationError` when the task is cancelled while waiting for writability.
    public func send<Target: Sendable, Failure: Error>(
        bytes: Int, closed: @autoclosure () -> any Error, to target: Target,
        _ write: @escaping @Sendable (Target) throws(Failure) -> Void
    ) async throws {
        if loop.inEventLoop {
            try await sendOnLoop(closed: closed(), to: target, write)
            return
        }
        let inTransit = bytesInTransit.load(ordering: .acquiring)
        if writable.load(ordering: .acquiring) && open.load(ordering: .acquiring) && inTransit < highWatermark {
            bytesInTransit.add(bytes, ordering: .acquiringAndReleasing)
            let accepted = loop.enqueue(.closure { [self] in
                bytesInTransit.subtract(bytes, ordering: .acquiringAndReleasing)
                try? write(target)
            })
            if !accepted { throw EventLoopError.shutDown(loop: loop.name) }
            return
        }
        guard open.load(ordering: .acquiring) else { throw closed() }
        let error = closed()
        // Hopping onto the loop keeps this write behind the ones queued before it, and the
        // wait for writability in this task, where cancelling the task reaches it.
        try await withTaskExecutorPreference(loop) { try await sendOnLoop(closed: error, to: target, write) }
    }

    /// The connection's writability changed to `isWritable` (loop thread): once writable,
    /// waiting senders try again.
    public func writabilityChanged(_ isWritable: Bool) {
        writable.store(isWritable, ordering: .releasing)
        if isWritable { resumeWaitingSenders(throwing: nil) }
    }

    /// The connection ended (loop thread): waiting senders throw `error`, later ones hop onto
    /// the loop and find it closed.
    public func ended(throwing error: any Error) {
        open.store(false, ordering: .releasing)
        resumeWaitingSenders(throwing: error)
    }

    /// Writes with `write` on the loop thread, first waiting while the connection is not writable.
    private func sendOnLoop<Target, Failure: Error>(
        closed: @autoclosure () -> any Error, to target: Target, _ write: (Target) throws(Failure) -> Void
    ) async throws {
        loop.preconditionInEventLoop()
        while isOpenOnLoop() && !isWritableOnLoop() {
            try await waitForWritability()
        }
        guard isOpenOnLoop() else { throw closed() }
        try write(target)
    }

    /// Waits, on the loop thread, until the connection turns writable or ends.
    private func waitForWritability() async throws {
        let ticket = nextTicket.add(1, ordering: .relaxed).newValue
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // The task may have hopped on its way here: the connection may have turned
                // writable or ended meanwhile, with nobody left to wake this sender.
                loop.preconditionInEventLoop()
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else if isWritableOnLoop() || !isOpenOnLoop() {
                    continuation.resume()
                } else {
                    waitingSenders.value[ticket] = continuation
                }
            }
        } onCancel: { [self] in
            loop.execute { [self] in
                waitingSenders.value.removeValue(forKey: ticket)?.resume(throwing: CancellationError())
            }
        }
    }

    /// Resumes every waiting sender: to retry when `error` is nil, else with the error.
    private func resumeWaitingSenders(throwing error: (any Error)?) {
        let senders = waitingSenders.value
        waitingSenders.value = [:]
        for sender in senders.values {
            if let error { sender.resume(throwing: error) } else { sender.resume() }
        }
    }
}
