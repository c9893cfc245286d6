import CLibUV

#if canImport(Glibc)
import Glibc
#endif

/// Watches for a POSIX signal (SIGINT, SIGTERM, …) on an event loop and runs an action on
/// the loop thread each time it arrives. The signal is unblocked on the loop thread, so it
/// arrives even when the process inherited it blocked from its parent.
/// Loop thread only, except ``close()``.
public final class LoopSignal: LoopHandle, @unchecked Sendable {
    /// The signal watched.
    public let signal: Int32
    private var action: (@Sendable () -> Void)?

    /// Starts watching `signal`. Loop thread only.
    ///
    /// - Throws: ``UVError`` when the signal cannot be watched.
    public init(_ signal: Int32, on loop: EventLoop, action: @escaping @Sendable () -> Void) throws(UVError) {
        self.signal = signal
        self.action = action
        try super.init(loop: loop, size: MemoryLayout<uv_signal_t>.size) {
            uv_signal_init(loop.uvLoop, $0.assumingMemoryBound(to: uv_signal_t.self))
        }
        let result = uv_signal_start(pointer(as: uv_signal_t.self), { handle, _ in
            LoopHandle.owner(of: UnsafeMutableRawPointer(handle), as: LoopSignal.self)?.action?()
        }, signal)
        if result >= 0 {
            var unblocked = sigset_t()
            sigemptyset(&unblocked)
            sigaddset(&unblocked, signal)
            pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        } else {
            close()
            throw UVError(code: result, operation: "watch signal \(signal)")
        }
    }

    override func didClose() {
        action = nil
        super.didClose()
    }
}
