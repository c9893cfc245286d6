import CLibUV
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process started on an event loop; its exit is reported on the loop thread.
///
/// Standard input is `/dev/null`; standard output and error are the parent's. The handle
/// stays open (and keeps the loop busy) until the process has exited and been reaped.
/// Loop thread only, except ``waitForExit()`` and ``close()``.
public final class ChildProcess: LoopHandle, @unchecked Sendable {
    /// How a child process ended.
    public struct Exit: Sendable, Equatable, CustomStringConvertible {
        /// The exit status (meaningful when ``signal`` is 0).
        public var status: Int64
        /// The signal that ended the process, or 0.
        public var signal: Int32

        /// Creates an exit record.
        public init(status: Int64, signal: Int32) {
            self.status = status
            self.signal = signal
        }

        public var description: String {
            guard signal != 0 else { return "exited with status \(status)" }
            let name = strsignal(signal).map { String(cString: $0) } ?? "signal \(signal)"
            return "was killed by signal \(signal) (\(name))"
        }
    }

    /// The child's process id.
    public private(set) var pid: Int32 = 0
    /// How the child ended, once it has.
    public private(set) var exit: Exit?
    /// ``exit`` for callers off the loop once the loop no longer takes work.
    private let finalExit = Mutex<Exit?>(nil)
    private var onExit: (@Sendable (Exit) -> Void)?
    private var exitWaiters: [CheckedContinuation<Exit, Never>] = []

    /// Starts `executable` (a path, or a name looked up in `PATH`) with `arguments` after argv[0].
    ///
    /// - Parameters:
    ///   - environment: the child's whole environment; nil inherits this process's.
    ///   - workingDirectory: where the child starts; nil keeps the parent's.
    ///   - newSession: puts the child in a session of its own, so a terminal's Ctrl-C reaches
    ///     only the parent; its exit is still reported.
    ///   - onExit: called once, on the loop thread, when the child has exited.
    /// - Throws: ``UVError`` when the process cannot be started (`ENOENT` for a missing
    ///   executable, …).
    public init(
        executable: String, arguments: [String], environment: [String: String]? = nil,
        workingDirectory: String? = nil, newSession: Bool = false, on loop: EventLoop,
        onExit: @escaping @Sendable (Exit) -> Void
    ) throws(UVError) {
        self.onExit = onExit
        var spawned: Int32 = 0
        try super.init(loop: loop, size: MemoryLayout<uv_process_t>.size) { memory in
            spawned = Self.spawn(
                memory.assumingMemoryBound(to: uv_process_t.self), loop: loop, executable: executable,
                arguments: arguments, environment: environment, workingDirectory: workingDirectory,
                newSession: newSession)
            return 0
        }
        guard spawned == 0 else {
            // uv_spawn registered the handle with the loop even though it failed: close it.
            self.onExit = nil
            close()
            throw UVError(code: spawned, operation: "start \(executable)")
        }
        pid = pointer(as: uv_process_t.self).pointee.pid
    }

    private static func spawn(
        _ process: UnsafeMutablePointer<uv_process_t>, loop: EventLoop, executable: String, arguments: [String],
        environment: [String: String]?, workingDirectory: String?, newSession: Bool
    ) -> Int32 {
        let argv = CStringArray([executable] + arguments)
        let envp = environment.map { CStringArray($0.map { "\($0.key)=\($0.value)" }) }
        defer {
            argv.free()
            envp?.free()
        }
        var stdio = [uv_stdio_container_t](repeating: uv_stdio_container_t(), count: 3)
        stdio[0].flags = UV_IGNORE
        for fd in 1...2 {
            stdio[fd].flags = UV_INHERIT_FD
            stdio[fd].data.fd = Int32(fd)
        }
        return stdio.withUnsafeMutableBufferPointer { stdio in
            executable.withCString { file in
                withOptionalCString(workingDirectory) { cwd in
                    var options = uv_process_options_t()
                    options.exit_cb = { handle, status, signal in
                        LoopHandle.owner(of: UnsafeMutableRawPointer(handle), as: ChildProcess.self)?
                            .exited(Exit(status: status, signal: signal))
                    }
                    options.file = file
                    options.args = argv.pointers
                    options.env = envp?.pointers
                    options.cwd = cwd
                    options.flags = newSession ? UInt32(UV_PROCESS_DETACHED.rawValue) : 0
                    options.stdio_count = 3
                    options.stdio = stdio.baseAddress
                    return uv_spawn(loop.uvLoop, process, &options)
                }
            }
        }
    }

    /// Sends `signal` to the child; does nothing once it has exited. Loop thread only.
    public func signal(_ signal: Int32) {
        loop.preconditionInEventLoop()
        guard exit == nil, !isClosing else { return }
        uv_process_kill(pointer(as: uv_process_t.self), signal)
    }

    /// Waits until the child has exited and returns how. Any task.
    ///
    /// Returns status -1 and signal 0 when the exit will never be known: the handle was
    /// closed (or the loop shut down) before the child exited.
    public func waitForExit() async -> Exit {
        await withCheckedContinuation { continuation in
            let accepted = loop.enqueue(.closure { [self] in
                if let exit {
                    continuation.resume(returning: exit)
                } else if isClosed {
                    continuation.resume(returning: Self.unknownExit)
                } else {
                    // Still running, or closing: `exited` or `didClose` resumes it.
                    exitWaiters.append(continuation)
                }
            })
            if !accepted { continuation.resume(returning: finalExit.withLock { $0 } ?? Self.unknownExit) }
        }
    }

    /// What waiters learn when the handle closed before the child exited.
    private static let unknownExit = Exit(status: -1, signal: 0)

    private func exited(_ exit: Exit) {
        self.exit = exit
        finalExit.withLock { $0 = exit }
        let onExit = self.onExit
        self.onExit = nil
        let waiters = exitWaiters
        exitWaiters = []
        close()
        onExit?(exit)
        for waiter in waiters { waiter.resume(returning: exit) }
    }

    override func didClose() {
        onExit = nil
        // A process handle closed before its exit (loop shutdown) leaves nobody waiting forever.
        let waiters = exitWaiters
        exitWaiters = []
        for waiter in waiters { waiter.resume(returning: exit ?? Self.unknownExit) }
        super.didClose()
    }
}

/// A NULL-terminated array of C strings, freed explicitly.
private struct CStringArray {
    let pointers: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>

    init(_ strings: [String]) {
        pointers = .allocate(capacity: strings.count + 1)
        for (index, string) in strings.enumerated() { pointers[index] = strdup(string) }
        pointers[strings.count] = nil
    }

    func free() {
        var index = 0
        while let pointer = pointers[index] {
            Glibc.free(pointer)
            index += 1
        }
        pointers.deallocate()
    }
}

private func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
}
