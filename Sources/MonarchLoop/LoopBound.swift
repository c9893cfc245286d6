/// A value that may be carried between threads but read or written only on its loop's
/// thread; every access checks that it is.
public final class LoopBound<Value>: @unchecked Sendable {
    /// The loop whose thread owns the value.
    public let loop: EventLoop
    private var storage: Value

    /// Wraps `value` for `loop`.
    public init(_ value: Value, loop: EventLoop) {
        self.loop = loop
        self.storage = value
    }

    /// The value. Loop thread only. A change through it (`bound.value.table[key] = x`) is
    /// made in place: a collection inside is not copied.
    public var value: Value {
        get {
            loop.preconditionInEventLoop()
            return storage
        }
        _modify {
            loop.preconditionInEventLoop()
            yield &storage
        }
    }
}
