import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MonarchLoop
import Synchronization

/// Where the `monarch` executables are: beside the test bundle.
enum Executables {
    static let directory = ProcessSetup.executableDirectory
    static var monarch: String { directory + "/monarch" }
    static var bundleWorker: String { directory + "/monarch-bundle-worker" }
    static var cacheWorker: String { directory + "/monarch-cache-worker" }
}

/// Everything a child process wrote to one of its pipes, collected by a thread of its own.
final class OutputBuffer: Sendable {
    private let state = Mutex<(bytes: [UInt8], closed: Bool)>(([], false))

    /// Reads `fd` until end of file, on a new thread; closes `fd` then.
    func collect(from fd: Int32) {
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

    var bytes: [UInt8] { state.withLock { $0.bytes } }
    var text: String { String(decoding: bytes, as: UTF8.self) }
    var isClosed: Bool { state.withLock { $0.closed } }
}

/// A child process started by a test, its output collected.
final class Spawned: @unchecked Sendable {
    let process = Process()
    let stdout = OutputBuffer()
    let stderr = OutputBuffer()
    let description: String

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        description = ([executable] + arguments).joined(separator: " ")
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // The reading ends become ours alone; the writing ends belong to the child now.
        stdout.collect(from: fcntl(out.fileHandleForReading.fileDescriptor, F_DUPFD_CLOEXEC, 0))
        stderr.collect(from: fcntl(err.fileHandleForReading.fileDescriptor, F_DUPFD_CLOEXEC, 0))
        try? out.fileHandleForReading.close()
        try? err.fileHandleForReading.close()
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    /// Sends `signal` if the process is still running.
    func signal(_ signal: Int32) {
        if process.isRunning { kill(pid, signal) }
    }

    /// Waits for a line of standard output containing `text`; throws if the process exits
    /// first or `timeout` passes.
    func waitForOutput(containing text: String, timeout: Double = 60) async throws -> String {
        let start = ContinuousClock.now
        while true {
            if let line = stdout.text.split(separator: "\n").first(where: { $0.contains(text) }) { return String(line) }
            if !process.isRunning {
                throw SpawnError(
                    "\(description) exited (status \(process.terminationStatus)) before printing \"\(text)\"; stderr:\n\(stderr.text)")
            }
            if ContinuousClock.now - start > .seconds(timeout) {
                throw SpawnError("no \"\(text)\" from \(description) within \(timeout) s; stderr:\n\(stderr.text)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// How the process ended: its exit status, or 128 + the signal that killed it; throws
    /// when it is still running after `timeout` (and kills it then).
    @discardableResult
    func waitForExit(timeout: Double = 60) async throws -> Int32 {
        let start = ContinuousClock.now
        while process.isRunning {
            if ContinuousClock.now - start > .seconds(timeout) {
                kill(pid, SIGKILL)
                throw SpawnError("\(description) still running after \(timeout) s; stderr:\n\(stderr.text)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        // Give the readers a moment to drain what the process wrote last.
        let drained = ContinuousClock.now
        while !(stdout.isClosed && stderr.isClosed) && ContinuousClock.now - drained < .seconds(2) {
            try await Task.sleep(for: .milliseconds(10))
        }
        let status = process.terminationStatus
        return process.terminationReason == .uncaughtSignal ? 128 + status : status
    }

    /// Runs a command to completion: its exit status and output.
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], timeout: Double = 60
    ) async throws -> (status: Int32, stdout: [UInt8], stderr: String) {
        let child = try Spawned(executable, arguments, environment: environment)
        let status = try await child.waitForExit(timeout: timeout)
        return (status, child.stdout.bytes, child.stderr.text)
    }
}

struct SpawnError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Whether the process `pid` is gone: no such process, or a zombie nobody reaped yet (it has
/// exited; with no init reaping orphans in a container, an orphan may stay one).
func processIsGone(_ pid: Int32) -> Bool {
    if kill(pid, 0) == -1 && errno == ESRCH { return true }
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return true }
    let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).prefix(1)
    return state == "Z" || state == "X"
}

/// Whether `pid` is a running Monarch worker, `monarch-KIND-worker` (guards against killing a
/// reused pid).
func isMonarchWorker(_ pid: Int32) -> Bool {
    guard let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
    let program = String(decoding: cmdline.prefix { $0 != 0 }, as: UTF8.self)
    return program.hasPrefix(Executables.directory + "/monarch-") && program.hasSuffix("-worker") && !processIsGone(pid)
}
