import CLibUV

/// A timer on an event loop: fires once after a delay, or repeatedly.
/// Loop thread only, except ``close()``.
public final class LoopTimer: LoopHandle, @unchecked Sendable {
    private var action: (@Sendable () -> Void)?

    /// Creates a stopped timer. Loop thread only.
    public init(on loop: EventLoop) throws(UVError) {
        try super.init(loop: loop, size: MemoryLayout<uv_timer_t>.size) {
            uv_timer_init(loop.uvLoop, $0.assumingMemoryBound(to: uv_timer_t.self))
        }
    }

    /// Fires `action` after `delayMs` milliseconds, then every `repeatMs` if that is not zero.
    /// Replaces any schedule set before.
    public func start(afterMs delayMs: UInt64, repeatMs: UInt64 = 0, _ action: @escaping @Sendable () -> Void) {
        loop.preconditionInEventLoop()
        guard !isClosing else { return }
        self.action = action
        uv_timer_start(pointer(as: uv_timer_t.self), { timer in
            // Held while it runs: the action may stop the timer, or start it with another.
            guard let action = LoopHandle.owner(of: UnsafeMutableRawPointer(timer), as: LoopTimer.self)?.action else { return }
            action()
        }, delayMs, repeatMs)
    }

    /// Stops the timer; it may be started again.
    public func stop() {
        loop.preconditionInEventLoop()
        guard !isClosing else { return }
        uv_timer_stop(pointer(as: uv_timer_t.self))
        action = nil
    }

    override func didClose() {
        action = nil
        super.didClose()
    }
}
