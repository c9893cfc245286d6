import Foundation

/// An HTTP server for the tests, a Python process on 127.0.0.1 started from a script in
/// `Origin/`: it prints its port, and exits when its standard input closes, so it cannot
/// outlive the test process even if a test crashes.
public final class TestServerProcess: Sendable {
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    private let process: SpawnedProcess

    /// Starts `Origin/<script>` and waits for its port.
    public init(script: String, quiet: Bool = false) throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Origin")
        let process = try SpawnedProcess(
            executable: "/usr/bin/env", arguments: ["python3", folder.appendingPathComponent(script).path],
            standardInput: .pipe, standardOutput: .collect, standardError: quiet ? .null : .inherit
        )
        self.process = process
        // The first line, or everything up to end of file (bounded: 60 s).
        let start = ContinuousClock.now
        var line = process.standardOutput.text
        while !line.contains("\n") && !process.standardOutput.isClosed && ContinuousClock.now - start < .seconds(60) {
            usleep(5_000)
            line = process.standardOutput.text
        }
        line = process.standardOutput.text
        guard let port = Int(line.prefix { $0 != "\n" }.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.signal(SIGTERM)
            process.closeStandardInput()
            _ = process.blockingWaitForExit(timeout: .seconds(30))
            throw TestServerError(message: "\(script) printed no port: \(line)")
        }
        self.port = port
    }

    /// The test origin (`Origin/origin.py`), started off the cooperative thread pool (starting
    /// blocks until the script prints its port, and tests run in parallel).
    public static func origin() async throws -> TestServerProcess {
        try await offPool { try TestServerProcess(script: "origin.py") }
    }

    /// Runs `body` with the test origin (``origin()``) started, and stops it afterwards,
    /// whether `body` returns or throws.
    public static func withOrigin<T>(_ body: (TestServerProcess) async throws -> T) async throws -> T {
        let origin = try await Self.origin()
        do {
            let result = try await body(origin)
            await origin.stop()
            return result
        } catch {
            await origin.stop()
            throw error
        }
    }

    /// httpbin (`Origin/httpbin_server.py`), started off the cooperative thread pool.
    public static func httpbin() async throws -> TestServerProcess {
        try await offPool { try TestServerProcess(script: "httpbin_server.py", quiet: true) }
    }

    /// `http://127.0.0.1:PORT` + `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// `127.0.0.1:PORT`, the allowlist entry.
    public var allowEntry: String { "127.0.0.1:\(port)" }

    /// Stops the server and waits, off the cooperative thread pool, for the process to end.
    public func stop() async {
        try? await offPool { self.stopNow() }
    }

    private func stopNow() {
        process.closeStandardInput()
        process.signal(SIGTERM)
        if process.blockingWaitForExit(timeout: .seconds(30)) == nil {
            process.signal(SIGKILL)
            _ = process.blockingWaitForExit(timeout: .seconds(30))
        }
    }
}

/// A test server that could not be started.
public struct TestServerError: Error, CustomStringConvertible {
    let message: String
    /// An error saying `message`.
    public init(message: String) { self.message = message }
    public var description: String { message }
}

/// Runs blocking `work` on a thread of its own, so that waiting for a process never holds
/// one of the few threads every test's tasks share.
public func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result(catching: work)) }
    }
}
