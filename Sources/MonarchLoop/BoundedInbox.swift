import DequeModule
import Synchronization

/// Items (frames, messages) that arrived on a loop thread, waiting for an async reader.
///
/// The loop delivers; one reader at a time awaits ``next(resumeReading:)``. When more than
/// ``highWatermark`` bytes wait (each item counted with the size given to ``deliver(_:size:)``),
/// ``deliver(_:size:)`` tells the loop to stop reading; once the reader has brought them down to
/// ``lowWatermark``, the reader asks it to read again. Items reach the reader in the order they
/// were delivered; after the end, what was buffered first (unless ``fail(_:)`` voided it).
///
/// Its members are inlinable, so that a reader in another module (MonarchTransport's
/// `AsyncMessageConnection`) gets code specialized for its item, as this module's
/// ``AsyncFrameStream`` does.
public final class BoundedInbox<Item: Sendable, End: Error & Equatable>: Sendable {
    /// Buffered bytes above which reading pauses.
    public let highWatermark: Int
    /// Buffered bytes at or below which reading resumes.
    public let lowWatermark: Int
    /// The end that is no failure: the reader gets nil for it, and throws any other.
    @usableFromInline let orderlyEnd: End

    @usableFromInline typealias Waiter = CheckedContinuation<Item?, any Error>

    @usableFromInline struct State: ~Copyable {
        @usableFromInline var items = Deque<(item: Item, size: Int)>()
        @usableFromInline var bufferedBytes = 0
        @usableFromInline var waiter: Waiter?
        @usableFromInline var end: End?
        @usableFromInline var readingPaused = false

        @inlinable init() {}

        /// Takes the oldest item; says whether reading should resume now.
        @inlinable mutating func pop(lowWatermark: Int) -> (item: Item, resume: Bool)? {
            guard let (item, size) = items.popFirst() else { return nil }
            bufferedBytes -= size
            if readingPaused && bufferedBytes <= lowWatermark {
                readingPaused = false
                return (item, true)
            }
            return (item, false)
        }
    }

    /// What the reader gets without waiting.
    @usableFromInline enum Ready {
        case item(Item, resume: Bool)
        case end(End)
        case cancelled
        case wait
    }

    @usableFromInline let state = Mutex(State())

    /// An empty inbox; `orderlyEnd` is the end that reads as nil (an orderly close).
    public init(orderlyEnd: End, highWatermark: Int = 4 << 20, lowWatermark: Int = 1 << 20) {
        self.orderlyEnd = orderlyEnd
        self.highWatermark = highWatermark
        self.lowWatermark = lowWatermark
    }

    /// Hands `item`, counted as `size` bytes, to the reader. Returns true when the caller
    /// should pause reading. Nothing is kept once the end is recorded.
    @inlinable public func deliver(_ item: Item, size: Int) -> Bool {
        let (waiter, pause) = state.withLock { state -> (Waiter?, Bool) in
            guard state.end == nil else { return (nil, false) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, false)
            }
            state.items.append((item, size))
            state.bufferedBytes += size
            if !state.readingPaused && state.bufferedBytes > highWatermark {
                state.readingPaused = true
                return (nil, true)
            }
            return (nil, false)
        }
        waiter?.resume(returning: item)
        return pause
    }

    /// Records the end; the reader gets the items still buffered first. The first end recorded
    /// is the one the reader gets.
    public func finish(_ end: End) {
        record(end, droppingBufferedItems: false)
    }

    /// Records a failure that voids the items still buffered: the reader gets `end` next.
    public func fail(_ end: End) {
        record(end, droppingBufferedItems: true)
    }

    private func record(_ end: End, droppingBufferedItems: Bool) {
        let waiter = state.withLock { state -> Waiter? in
            if droppingBufferedItems {
                state.items.removeAll()
                state.bufferedBytes = 0
                state.end = end
            } else if state.end == nil {
                state.end = end
            }
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        if let waiter { resume(waiter, at: end) }
    }

    /// The next item; nil once the orderly end was recorded and every item was read.
    ///
    /// - Parameter resumeReading: called when reading should resume after a pause.
    /// - Throws: the recorded end when it is not the orderly one, or `CancellationError` when
    ///   the awaiting task is cancelled.
    @inlinable public func next(resumeReading: @escaping @Sendable () -> Void) async throws -> Item? {
        let ready = state.withLock { state in take(from: &state, registering: nil) }
        if let item = try settle(ready, resumeReading: resumeReading) { return item }
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
                    resume(continuation, at: end)
                case .item(let item, let resume):
                    if resume { resumeReading() }
                    continuation.resume(returning: item)
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
    @inlinable func take(from state: inout State, registering continuation: Waiter?) -> Ready {
        if let (item, resume) = state.pop(lowWatermark: lowWatermark) { return .item(item, resume: resume) }
        if let end = state.end { return .end(end) }
        guard let continuation else { return .wait }
        if Task.isCancelled { return .cancelled }
        precondition(state.waiter == nil, "two tasks awaited the same connection's next item")
        state.waiter = continuation
        return .wait
    }

    /// Returns a ready item (resuming reading if due), nil for an orderly end or a wait,
    /// throws for any other end.
    @inlinable func settle(_ ready: Ready, resumeReading: () -> Void) throws -> Item? {
        switch ready {
        case .item(let item, let resume):
            if resume { resumeReading() }
            return item
        case .end(let end):
            if end == orderlyEnd { return nil }
            throw end
        case .cancelled:
            throw CancellationError()
        case .wait:
            return nil
        }
    }

    @inlinable func resume(_ continuation: Waiter, at end: End) {
        if end == orderlyEnd {
            continuation.resume(returning: nil)
        } else {
            continuation.resume(throwing: end)
        }
    }
}
