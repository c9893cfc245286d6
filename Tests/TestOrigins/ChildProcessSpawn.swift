import CTestSpawn
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

// The tests' own way to start a process, on posix_spawn(3). Foundation's `Process.run()` on
// Linux (swift-corelibs-foundation in Swift 6.3.1) scans /proc/self/fd copying a whole 256-byte
// `d_name` out of records shorter than that, and now and then reads past a mapped page and
// crashes the test process; the tests spawn many processes, so they do not use it.

/// How a spawned process ended.
public enum ChildExit: Sendable, Equatable, CustomStringConvertible {
    /// It called exit with this status.
    case exited(Int32)
    /// This signal killed it.
    case signalled(Int32)
    /// Something other than its ``SpawnedProcess`` reaped it, so how it ended is unknown.
    case lost

    /// Decodes a status from waitpid(2) (the WIFEXITED/WEXITSTATUS/WTERMSIG macros, which Swift
    /// does not import); nil for a stopped or continued process.
    init?(waitStatus: Int32) {
        let low = waitStatus & 0x7f
        if low == 0 {
            self = .exited((waitStatus >> 8) & 0xff)
        } else if low != 0x7f {
            self = .signalled(low)
        } else {
            return nil
        }
    }

    /// The status as a shell reports it: the exit status, 128 + the signal, or -1 when lost.
    public var status: Int32 {
        switch self {
        case .exited(let status): status
        case .signalled(let signal): 128 + signal
        case .lost: -1
        }
    }

    /// How it ended, in words: "exit status 3", "signal 15".
    public var description: String {
        switch self {
        case .exited(let status): "exit status \(status)"
        case .signalled(let signal): "signal \(signal)"
        case .lost: "reaped elsewhere"
        }
    }
}

/// Why a process could not be spawned: the call that failed and its error number.
public struct SpawnFailure: Error, CustomStringConvertible {
    /// The call that failed.
    public let call: String
    /// The error number it gave.
    public let code: Int32
    /// The executable that was to run.
    public let executable: String

    /// The executable, the call and the error, in words.
    public var description: String {
        "spawning \(executable): \(call) failed: \(String(cString: strerror(code))) (\(code))"
    }
}

/// Everything a child process wrote to one of its pipes, collected by a thread of its own
/// until end of file. Empty and closed from the start when nothing is collected.
public final class OutputBuffer: Sendable {
    private let state: Mutex<(bytes: [UInt8], closed: Bool)>

    /// Reads `fd` until end of file on a new thread, then closes it; with nil, a buffer that
    /// stays empty and is closed already.
    init(reading fd: Int32?) {
        state = Mutex(([], fd == nil))
        guard let fd else { return }
        Thread.detachNewThread { [self] in
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                state.withLock { $0.bytes += chunk[..<count] }
            }
            close(fd)
            state.withLock { $0.closed = true }
        }
    }

    /// The bytes read so far.
    public var bytes: [UInt8] { state.withLock { $0.bytes } }
    /// The bytes read so far, decoded as UTF-8.
    public var text: String { String(decoding: bytes, as: UTF8.self) }
    /// Whether the pipe reached end of file (every writer closed it), or nothing is collected.
    public var isClosed: Bool { state.withLock { $0.closed } }
}

/// A process started with posix_spawn(3): its own process group, a cleared signal mask, no
/// descriptor of the parent's but the three standard ones it is given, and reaped (by a thread
/// of its own) as soon as it exits, so that it never lingers as a zombie.
public final class SpawnedProcess: Sendable {
    /// What the child's standard input is.
    public enum Input: Sendable {
        /// The parent's standard input.
        case inherit
        /// /dev/null.
        case null
        /// A pipe whose writing end the parent keeps (see ``closeStandardInput()``).
        case pipe
    }

    /// Where the child's standard output or standard error goes.
    public enum Output: Sendable {
        /// The parent's own descriptor.
        case inherit
        /// /dev/null.
        case null
        /// A pipe read into an ``OutputBuffer`` by a thread of its own.
        case collect
        /// For standard error only: wherever standard output goes (one pipe for both).
        case standardOutput
    }

    /// The child's process id.
    public let pid: pid_t
    /// The executable and its arguments, for messages.
    public let commandLine: String
    /// What the child wrote to standard output, with ``Output/collect`` (and its standard error
    /// too with ``Output/standardOutput``); empty otherwise.
    public let standardOutput: OutputBuffer
    /// What the child wrote to standard error, with ``Output/collect``; empty otherwise.
    public let standardError: OutputBuffer
    /// The writing end of the standard input pipe; -1 without one or once closed.
    private let input: Mutex<Int32>
    /// How the child ended; nil while it runs. Reaping happens only under this lock, so a
    /// signal sent under it never reaches a reused process id.
    private let ended = Mutex<ChildExit?>(nil)

    /// Starts `executable` (a path; nothing is looked up in PATH) with `arguments` (its
    /// argv[0] is `executable`) and `environment` (nil: this process's), its standard
    /// descriptors as given, in a new process group when `newProcessGroup` (as Foundation's
    /// `Process` does, so a signal to the test's group never reaches it). Throws when the
    /// executable cannot be started.
    public init(
        executable: String, arguments: [String], environment: [String: String]? = nil,
        standardInput: Input = .inherit, standardOutput: Output = .inherit, standardError: Output = .inherit,
        newProcessGroup: Bool = true
    ) throws(SpawnFailure) {
        precondition(standardOutput != .standardOutput, "only standard error can follow standard output")
        commandLine = ([executable] + arguments).joined(separator: " ")
        func failure(_ call: String, _ code: Int32) -> SpawnFailure {
            SpawnFailure(call: call, code: code, executable: executable)
        }

        // Descriptors the child gets (closed here once it has them), and the ones kept here.
        var forChild: [Int32] = []
        var kept: [Int32] = []
        var spawned = false
        defer {
            forChild.forEach { close($0) }
            if !spawned { kept.forEach { close($0) } }
        }
        var nullDevice: Int32?
        func openNull() throws(SpawnFailure) -> Int32 {
            if let nullDevice { return nullDevice }
            let fd = open("/dev/null", O_RDWR | O_CLOEXEC)
            guard fd >= 0 else { throw failure("open /dev/null", errno) }
            forChild.append(fd)
            nullDevice = fd
            return fd
        }
        /// A close-on-exec pipe: (reading end, writing end).
        func makePipe() throws(SpawnFailure) -> (read: Int32, write: Int32) {
            var ends: [Int32] = [-1, -1]
            guard monarch_test_pipe_cloexec(&ends) == 0 else { throw failure("pipe2", errno) }
            return (ends[0], ends[1])
        }

        // Where the child's 0, 1 and 2 come from (nil: inherited as they are).
        var stdinSource: Int32?
        var inputWriter: Int32 = -1
        switch standardInput {
        case .inherit: break
        case .null: stdinSource = try openNull()
        case .pipe:
            let ends = try makePipe()
            forChild.append(ends.read)
            kept.append(ends.write)
            stdinSource = ends.read
            inputWriter = ends.write
        }
        func outputSource(_ output: Output) throws(SpawnFailure) -> (source: Int32?, reader: Int32?) {
            switch output {
            case .inherit, .standardOutput: return (nil, nil)
            case .null: return (try openNull(), nil)
            case .collect:
                let ends = try makePipe()
                forChild.append(ends.write)
                kept.append(ends.read)
                return (ends.write, ends.read)
            }
        }
        let stdout = try outputSource(standardOutput)
        let stderr = try outputSource(standardError)

        var actions = posix_spawn_file_actions_t()
        var code = posix_spawn_file_actions_init(&actions)
        guard code == 0 else { throw failure("posix_spawn_file_actions_init", code) }
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, source) in [(STDIN_FILENO, stdinSource), (STDOUT_FILENO, stdout.source), (STDERR_FILENO, stderr.source)] {
            guard let source else { continue }
            code = posix_spawn_file_actions_adddup2(&actions, source, target)
            guard code == 0 else { throw failure("posix_spawn_file_actions_adddup2", code) }
        }
        if standardError == .standardOutput {
            code = posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO)
            guard code == 0 else { throw failure("posix_spawn_file_actions_adddup2", code) }
        }
        // Every descriptor above the standard three is closed in the child, whether or not
        // whoever opened it asked for close-on-exec (ours all did).
        code = monarch_test_spawn_add_closefrom(&actions, 3)
        guard code == 0 else { throw failure("posix_spawn_file_actions_addclosefrom_np", code) }

        var attributes = posix_spawnattr_t()
        code = posix_spawnattr_init(&attributes)
        guard code == 0 else { throw failure("posix_spawnattr_init", code) }
        defer { posix_spawnattr_destroy(&attributes) }
        var flags = Int32(POSIX_SPAWN_SETSIGMASK)
        if newProcessGroup { flags |= Int32(POSIX_SPAWN_SETPGROUP) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        code = posix_spawnattr_setsigmask(&attributes, &noSignals)
        guard code == 0 else { throw failure("posix_spawnattr_setsigmask", code) }
        code = posix_spawnattr_setpgroup(&attributes, 0)
        guard code == 0 else { throw failure("posix_spawnattr_setpgroup", code) }
        code = posix_spawnattr_setflags(&attributes, Int16(flags))
        guard code == 0 else { throw failure("posix_spawnattr_setflags", code) }

        let environmentList = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        var child: pid_t = 0
        code = withCStringArray([executable] + arguments) { argv in
            withCStringArray(environmentList) { envp in
                posix_spawn(&child, executable, &actions, &attributes, argv, envp)
            }
        }
        guard code == 0 else { throw failure("posix_spawn", code) }
        spawned = true

        pid = child
        input = Mutex(inputWriter)
        self.standardOutput = OutputBuffer(reading: stdout.reader)
        self.standardError = OutputBuffer(reading: stderr.reader)
        Thread.detachNewThread { [self] in
            // Sleeps until the child has exited, leaving it unreaped (WNOWAIT), so that the
            // reaping itself happens under the lock.
            var info = siginfo_t()
            while waitid(P_PID, id_t(self.pid), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
            _ = self.exit
        }
    }

    deinit {
        closeStandardInput()
    }

    /// How the child ended; nil while it is still running.
    public var exit: ChildExit? {
        ended.withLock { ended in
            reapIfExited(&ended)
            return ended
        }
    }

    /// Whether the child is still running.
    public var isRunning: Bool { exit == nil }

    /// Sends `signal` to the child if it is still running (never to a process that reused
    /// its id); whether it was sent.
    @discardableResult
    public func signal(_ signal: Int32) -> Bool {
        ended.withLock { ended in
            reapIfExited(&ended)
            return ended == nil && kill(pid, signal) == 0
        }
    }

    /// Writes `text` to the child's standard input pipe; whether all of it was written (false
    /// without a pipe, once it is closed, or when nothing reads the pipe: SIGPIPE is blocked
    /// for the write, and taken back if it came, so that it cannot end the test process).
    @discardableResult
    public func writeStandardInput(_ text: String) -> Bool {
        input.withLock { fd in
            guard fd >= 0 else { return false }
            let bytes = Array(text.utf8)
            var pipeSignal = sigset_t()
            sigemptyset(&pipeSignal)
            sigaddset(&pipeSignal, SIGPIPE)
            var previous = sigset_t()
            pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
            defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EPIPE {
                var now = timespec()
                _ = sigtimedwait(&pipeSignal, nil, &now)
            }
            return written == bytes.count
        }
    }

    /// Closes the writing end of the child's standard input pipe (the child reads end of
    /// file); nothing without one, or when it is closed already.
    public func closeStandardInput() {
        input.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    /// Waits, polling, for the child to exit and then (at most 2 s more) for its collected
    /// output to reach end of file; nil when it is still running after `timeout`.
    public func waitForExit(timeout: Duration) async throws -> ChildExit? {
        let start = ContinuousClock.now
        while isRunning {
            if ContinuousClock.now - start > timeout { return nil }
            try await Task.sleep(for: .milliseconds(20))
        }
        let drained = ContinuousClock.now
        while !(standardOutput.isClosed && standardError.isClosed) && ContinuousClock.now - drained < .seconds(2) {
            try await Task.sleep(for: .milliseconds(10))
        }
        return exit
    }

    /// ``waitForExit(timeout:)`` for a thread that may block (never one of Swift
    /// concurrency's): sleeps between polls.
    public func blockingWaitForExit(timeout: Duration) -> ChildExit? {
        let start = ContinuousClock.now
        while isRunning {
            if ContinuousClock.now - start > timeout { return nil }
            usleep(10_000)
        }
        let drained = ContinuousClock.now
        while !(standardOutput.isClosed && standardError.isClosed) && ContinuousClock.now - drained < .seconds(2) {
            usleep(5_000)
        }
        return exit
    }

    /// Reaps the child if it has exited, recording how; called with the lock held.
    private func reapIfExited(_ ended: inout ChildExit?) {
        guard ended == nil else { return }
        var status: Int32 = 0
        var result: pid_t
        repeat {
            result = waitpid(pid, &status, WNOHANG)
        } while result == -1 && errno == EINTR
        if result == pid {
            ended = ChildExit(waitStatus: status)
        } else if result == -1 && errno == ECHILD {
            ended = .lost
        }
    }
}

/// Calls `body` with a NULL-terminated C array of copies of `strings`, freed afterwards.
private func withCStringArray<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    let copies: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
    defer { copies.forEach { free($0) } }
    return copies.withUnsafeBufferPointer { body($0.baseAddress!) }
}
