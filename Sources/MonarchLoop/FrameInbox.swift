import DequeModule
import Synchronization

/// Frames that arrived on the loop thread, waiting for an async reader.
///
/// The loop delivers; one reader at a time awaits ``next()``. When more than
/// ``highWatermark`` bytes wait, ``deliver(_:)`` asks the loop to stop reading; once the
/// reader has brought them down to ``lowWatermark``, ``next()`` asks it to read again.
final class FrameInbox: Sendable {
    /// Buffered bytes above which reading pauses.
    let highWatermark: Int
    /// Buffered bytes at or below which reading resumes.
    let lowWatermark: Int

    private struct State: ~Copyable {
        var frames = Deque<[UInt8]>()
        var bufferedBytes = 0
        var waiter: CheckedContinuation<[UInt8]?, any Error>?
        var end: FrameConnection.End?
        var readingPaused = false
    }

    private let state = Mutex(State())

    init(highWatermark: Int = 4 << 20, lowWatermark: Int = 1 << 20) {
        self.highWatermark = highWatermark
        self.lowWatermark = lowWatermark
    }

    /// Hands a frame to the reader. Returns true when the caller should pause reading.
    func deliver(_ frame: [UInt8]) -> Bool {
        let (waiter, pause) = state.withLock { state -> (CheckedContinuation<[UInt8]?, any Error>?, Bool) in
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, false)
            }
            state.frames.append(frame)
            state.bufferedBytes += frame.count
            if !state.readingPaused && state.bufferedBytes > highWatermark {
                state.readingPaused = true
                return (nil, true)
            }
            return (nil, false)
        }
        waiter?.resume(returning: frame)
        return pause
    }

    /// Records the end of the stream; the reader gets the frames still buffered first.
    func finish(_ end: FrameConnection.End) {
        let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, any Error>? in
            guard state.end == nil else { return nil }
            state.end = end
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        if let waiter { Self.resume(waiter, at: end) }
    }

    /// The next frame; nil once the peer closed in order and every frame was read.
    ///
    /// - Parameter resumeReading: called when reading should resume after a pause.
    /// - Throws: the connection's ``FrameConnection/End`` when it ended otherwise, or
    ///   `CancellationError` when the awaiting task is cancelled.
    func next(resumeReading: () -> Void) async throws -> [UInt8]? {
        enum Immediate {
            case frame([UInt8], resume: Bool)
            case end(FrameConnection.End)
            case cancelled
            case wait
        }
        let immediate = state.withLock { state -> Immediate in
            if let frame = state.frames.popFirst() {
                state.bufferedBytes -= frame.count
                var resume = false
                if state.readingPaused && state.bufferedBytes <= lowWatermark {
                    state.readingPaused = false
                    resume = true
                }
                return .frame(frame, resume: resume)
            }
            if let end = state.end { return .end(end) }
            return .wait
        }
        switch immediate {
        case .frame(let frame, let resume):
            if resume { resumeReading() }
            return frame
        case .end(let end):
            if end == .closed { return nil }
            throw end
        case .cancelled, .wait:
            break
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { state -> Immediate in
                    if let frame = state.frames.popFirst() {
                        state.bufferedBytes -= frame.count
                        return .frame(frame, resume: false)
                    }
                    if let end = state.end { return .end(end) }
                    if Task.isCancelled { return .cancelled }
                    precondition(state.waiter == nil, "two tasks awaited the same connection's next frame")
                    state.waiter = continuation
                    return .wait
                }
                switch ready {
                case .frame(let frame, _): continuation.resume(returning: frame)
                case .end(let end): Self.resume(continuation, at: end)
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, any Error>? in
                let waiter = state.waiter
                state.waiter = nil
                return waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    private static func resume(_ continuation: CheckedContinuation<[UInt8]?, any Error>, at end: FrameConnection.End) {
        if end == .closed {
            continuation.resume(returning: nil)
        } else {
            continuation.resume(throwing: end)
        }
    }
}
