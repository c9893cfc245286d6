import CLibUV

/// The one close path every libuv handle of the layer goes through.
///
/// A handle's memory is allocated here and freed in libuv's close callback, never before
/// (`uv_close` before release). While the handle is open it keeps its Swift owner alive, so a
/// listener or connection lives until it is closed, whoever holds a reference. All state is
/// touched on the loop thread only; ``close()`` may be called from any thread.
public class LoopHandle: @unchecked Sendable {
    /// The loop the handle belongs to.
    public let loop: EventLoop
    /// The handle's memory, as the generic `uv_handle_t`.
    let handle: UnsafeMutablePointer<uv_handle_t>
    /// Whether `uv_close` has been called.
    public private(set) var isClosing = false
    /// Whether libuv has finished closing the handle (its memory is then gone).
    public private(set) var isClosed = false
    /// Run on the loop thread once the handle is closed and its callbacks are done.
    private var closeWaiters: [@Sendable () -> Void] = []

    /// Allocates `size` bytes for a handle of some libuv type; `initialize` runs its `uv_*_init`
    /// on the loop thread.
    init(loop: EventLoop, size: Int, initialize: (UnsafeMutableRawPointer) -> Int32) throws(UVError) {
        loop.preconditionInEventLoop()
        self.loop = loop
        let memory = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        let result = initialize(memory)
        guard result >= 0 else {
            memory.deallocate()
            throw UVError(code: result, operation: "initialise \(Self.self)")
        }
        handle = memory.bindMemory(to: uv_handle_t.self, capacity: 1)
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
    }

    /// The handle as a pointer to its concrete libuv type.
    func pointer<T>(as type: T.Type) -> UnsafeMutablePointer<T> {
        UnsafeMutableRawPointer(handle).assumingMemoryBound(to: T.self)
    }

    /// Returns the Swift owner of a handle that libuv hands to a callback.
    static func owner<T: LoopHandle>(of handle: UnsafeMutableRawPointer?, as type: T.Type) -> T? {
        guard let handle else { return nil }
        let generic = handle.assumingMemoryBound(to: uv_handle_t.self)
        guard let data = generic.pointee.data else { return nil }
        return Unmanaged<LoopHandle>.fromOpaque(data).takeUnretainedValue() as? T
    }

    /// Closes the handle. Idempotent; may be called from any thread (it hops to the loop).
    /// Callbacks already scheduled by libuv still run before the close completes.
    public func close() {
        guard loop.inEventLoop else {
            loop.execute { self.close() }
            return
        }
        guard !isClosing else { return }
        isClosing = true
        willClose()
        uv_close(handle) { handle in
            guard let handle, let data = handle.pointee.data else { return }
            let owner = Unmanaged<LoopHandle>.fromOpaque(data).takeRetainedValue()
            handle.pointee.data = nil
            owner.isClosed = true
            owner.didClose()
            UnsafeMutableRawPointer(handle).deallocate()
        }
    }

    /// Runs `body` on the loop thread once the handle has closed (at once if it already has).
    /// Loop thread only.
    public func whenClosed(_ body: @escaping @Sendable () -> Void) {
        loop.preconditionInEventLoop()
        if isClosed { body() } else { closeWaiters.append(body) }
    }

    /// Waits until the handle has closed, closing it first. Returns at once when the loop has
    /// shut down (which closed every handle).
    public func closeAndWait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let accepted = loop.enqueue(.closure {
                self.whenClosed { continuation.resume() }
                self.close()
            })
            if !accepted { continuation.resume() }
        }
    }

    /// Called on the loop thread just before `uv_close`; subclasses stop their work here.
    func willClose() {}

    /// Called on the loop thread once libuv has closed the handle; subclasses release what
    /// they hold here (and call super).
    func didClose() {
        let waiters = closeWaiters
        closeWaiters = []
        for waiter in waiters { waiter() }
    }
}
