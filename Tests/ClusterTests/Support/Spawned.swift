import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MonarchLoop
import TestOrigins

/// Where the `monarch` executables are: beside the test bundle.
enum Executables {
    static let directory = ProcessSetup.executableDirectory
    static var monarch: String { directory + "/monarch" }
    static var bundleWorker: String { directory + "/monarch-bundle-worker" }
    static var cacheWorker: String { directory + "/monarch-cache-worker" }
    static var networkWorker: String { directory + "/monarch-network-worker" }
}

/// A child process started by a test, its output collected.
final class Spawned: Sendable {
    /// The process itself.
    let child: SpawnedProcess
    /// What it wrote to standard output.
    var stdout: OutputBuffer { child.standardOutput }
    /// What it wrote to standard error.
    var stderr: OutputBuffer { child.standardError }
    /// The executable and its arguments.
    var description: String { child.commandLine }

    /// Starts `executable` with `arguments`, this process's environment with `environment`
    /// over it, standard input /dev/null, and both outputs collected.
    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        child = try SpawnedProcess(
            executable: executable, arguments: arguments,
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
            standardInput: .null, standardOutput: .collect, standardError: .collect
        )
    }

    /// Its process id.
    var pid: Int32 { child.pid }
    /// Whether it is still running.
    var isRunning: Bool { child.isRunning }

    /// Sends `signal` if the process is still running.
    func signal(_ signal: Int32) {
        child.signal(signal)
    }

    /// Waits for a line of standard output containing `text`; throws if the process exits
    /// first or `timeout` passes.
    func waitForOutput(containing text: String, timeout: Double = 60) async throws -> String {
        let start = ContinuousClock.now
        while true {
            if let line = stdout.text.split(separator: "\n").first(where: { $0.contains(text) }) { return String(line) }
            if let exit = child.exit {
                throw SpawnError("\(description) exited (\(exit)) before printing \"\(text)\"; stderr:\n\(stderr.text)")
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
        // Once it has exited, this gives the readers a moment to drain what it wrote last.
        guard let exit = try await child.waitForExit(timeout: .seconds(timeout)) else {
            child.signal(SIGKILL)
            throw SpawnError("\(description) still running after \(timeout) s; stderr:\n\(stderr.text)")
        }
        return exit.status
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

/// Whether the process `pid` is stopped (by SIGSTOP): a signal takes effect a moment after
/// it is sent, and a process may still answer in that moment.
func processIsStopped(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return false }
    return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).prefix(1) == "T"
}

/// Whether `pid` is a running Monarch worker, `monarch-KIND-worker` (guards against killing a
/// reused pid).
func isMonarchWorker(_ pid: Int32) -> Bool {
    guard let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
    let program = String(decoding: cmdline.prefix { $0 != 0 }, as: UTF8.self)
    return program.hasPrefix(Executables.directory + "/monarch-") && program.hasSuffix("-worker") && !processIsGone(pid)
}
