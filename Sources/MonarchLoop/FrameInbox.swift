import DequeModule
import Synchronization

/// Frames that arrived on the loop thread, waiting for an async reader.
///
/// The loop delivers; one reader at a time awaits ``next(resumeReading:)``. When more than
/// ``highWatermark`` bytes wait, ``deliver(_:)`` asks the loop to stop reading; once the
/// reader has brought them down to ``lowWatermark``, the reader asks it to read again.
final class FrameInbox: Sendable {
    /// Buffered bytes above which reading pauses.
    let highWatermark: Int
    /// Buffered bytes at or below which reading resumes.
    let lowWatermark: Int

    private typealias Waiter = CheckedContinuation<[UInt8]?, any Error>

    private struct State: ~Copyable {
        var frames = Deque<[UInt8]>()
        var bufferedBytes = 0
        var waiter: Waiter?
        var end: FrameStream.End?
        var readingPaused = false

        /// Takes the oldest frame; says whether reading should resume now.
        mutating func pop(lowWatermark: Int) -> (frame: [UInt8], resume: Bool)? {
            guard let frame = frames.popFirst() else { return nil }
            bufferedBytes -= frame.count
            if readingPaused && bufferedBytes <= lowWatermark {
                readingPaused = false
                return (frame, true)
            }
            return (frame, false)
        }
    }

    /// What the reader gets without waiting.
    private enum Ready {
        case frame([UInt8], resume: Bool)
        case end(FrameStream.End)
        case cancelled
        case wait
    }

    private let state = Mutex(State())

    init(highWatermark: Int = 4 << 20, lowWatermark: Int = 1 << 20) {
        self.highWatermark = highWatermark
        self.lowWatermark = lowWatermark
    }

    /// Hands a frame to the reader. Returns true when the caller should pause reading.
    func deliver(_ frame: [UInt8]) -> Bool {
        let (waiter, pause) = state.withLock { state -> (Waiter?, Bool) in
            guard state.end == nil else { return (nil, false) }
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
    func finish(_ end: FrameStream.End) {
        record(end, droppingBufferedFrames: false)
    }

    /// Records a failure that voids the frames still buffered: the reader gets `end` next.
    func fail(_ end: FrameStream.End) {
        record(end, droppingBufferedFrames: true)
    }

    private func record(_ end: FrameStream.End, droppingBufferedFrames: Bool) {
        let waiter = state.withLock { state -> Waiter? in
            if droppingBufferedFrames {
                state.frames.removeAll()
                state.bufferedBytes = 0
                state.end = end
            } else if state.end == nil {
                state.end = end
            }
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        if let waiter { Self.resume(waiter, at: end) }
    }

    /// The next frame; nil once the peer closed in order and every frame was read.
    ///
    /// - Parameter resumeReading: called when reading should resume after a pause.
    /// - Throws: the connection's ``FrameStream/End`` when it ended otherwise, or
    ///   `CancellationError` when the awaiting task is cancelled.
    func next(resumeReading: @escaping @Sendable () -> Void) async throws -> [UInt8]? {
        let ready = state.withLock { state in take(from: &state, registering: nil) }
        if let frame = try Self.settle(ready, resumeReading: resumeReading) { return frame }
        guard case .wait = ready else { return nil }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: Waiter) in
                let ready = state.withLock { state in take(from: &state, registering: continuation) }
                switch ready {
                case .wait:
                    break
                case .cancelled:
                    continuation.resume(throwing: CancellationError())
                case .end(let end):
                    Self.resume(continuation, at: end)
                case .frame(let frame, let resume):
                    if resume { resumeReading() }
                    continuation.resume(returning: frame)
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                let waiter = state.waiter
                state.waiter = nil
                return waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Takes what is ready; with a continuation and nothing ready, registers it as the waiter.
    private func take(from state: inout State, registering continuation: Waiter?) -> Ready {
        if let (frame, resume) = state.pop(lowWatermark: lowWatermark) { return .frame(frame, resume: resume) }
        if let end = state.end { return .end(end) }
        guard let continuation else { return .wait }
        if Task.isCancelled { return .cancelled }
        precondition(state.waiter == nil, "two tasks awaited the same connection's next frame")
        state.waiter = continuation
        return .wait
    }

    /// Returns a ready frame (resuming reading if due), nil for an orderly end or a wait,
    /// throws for any other end.
    private static func settle(_ ready: Ready, resumeReading: () -> Void) throws -> [UInt8]? {
        switch ready {
        case .frame(let frame, let resume):
            if resume { resumeReading() }
            return frame
        case .end(let end):
            if end == .closed { return nil }
            throw end
        case .cancelled:
            throw CancellationError()
        case .wait:
            return nil
        }
    }

    private static func resume(_ continuation: Waiter, at end: FrameStream.End) {
        if end == .closed {
            continuation.resume(returning: nil)
        } else {
            continuation.resume(throwing: end)
        }
    }
}
