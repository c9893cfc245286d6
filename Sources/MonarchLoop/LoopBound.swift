/// A value that may be carried between threads but read or written only on its loop's
/// thread; every access checks that it is.
public final class LoopBound<Value>: @unchecked Sendable {
    /// The loop whose thread owns the value.
    public let loop: EventLoop
    @usableFromInline var storage: Value

    /// Wraps `value` for `loop`.
    public init(_ value: Value, loop: EventLoop) {
        self.loop = loop
        self.storage = value
    }

    /// The value. Loop thread only. Reading a part of it (`bound.value.count`) borrows the
    /// value rather than copying it whole, and a change through it (`bound.value.table[key] = x`)
    /// is made in place: a collection inside is not copied.
    @inlinable public var value: Value {
        _read {
            loop.preconditionInEventLoop()
            yield storage
        }
        _modify {
            loop.preconditionInEventLoop()
            yield &storage
        }
    }
}
