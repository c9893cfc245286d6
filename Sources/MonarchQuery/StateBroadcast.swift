import Synchronization

/// A current state and the streams that follow it: each new stream begins with the current
/// state and then gets every change, in order. Each stream keeps at most
/// ``bufferLimit`` states a slow reader has not taken yet, dropping the oldest.
final class StateBroadcast<State: Sendable>: Sendable {
    /// The states a stream holds for a slow reader.
    static var bufferLimit: Int { 64 }

    private struct Inner {
        var state: State
        var streams: [Int: AsyncStream<State>.Continuation] = [:]
        var nextID = 0
    }

    private let inner: Mutex<Inner>

    init(_ initial: State) { inner = Mutex(Inner(state: initial)) }

    /// The current state.
    var state: State { inner.withLock { $0.state } }

    /// Sets the state and tells every stream.
    func set(_ state: State) {
        inner.withLock { inner in
            inner.state = state
            for stream in inner.streams.values { stream.yield(state) }
        }
    }

    /// Changes the state with `change` (under the lock) and tells every stream.
    func update<T>(_ change: (inout State) -> T) -> T {
        inner.withLock { inner in
            let result = change(&inner.state)
            for stream in inner.streams.values { stream.yield(inner.state) }
            return result
        }
    }

    /// A stream beginning with the current state; it ends when ``finish()`` is called or the
    /// reader stops.
    func stream() -> AsyncStream<State> {
        let (stream, continuation) = AsyncStream.makeStream(of: State.self, bufferingPolicy: .bufferingNewest(Self.bufferLimit))
        let id = inner.withLock { inner in
            defer { inner.nextID += 1 }
            continuation.yield(inner.state)
            inner.streams[inner.nextID] = continuation
            return inner.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.inner.withLock { $0.streams.removeValue(forKey: id) }
        }
        return stream
    }

    /// Ends every stream.
    func finish() {
        let streams = inner.withLock { inner in
            defer { inner.streams.removeAll() }
            return Array(inner.streams.values)
        }
        for stream in streams { stream.finish() }
    }
}
