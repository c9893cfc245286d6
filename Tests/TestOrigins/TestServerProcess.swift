import Foundation

/// An HTTP server for the tests, a Python process on 127.0.0.1 started from a script in
/// `Origin/`: it prints its port, and exits when its standard input closes, so it cannot
/// outlive the test process even if a test crashes.
public final class TestServerProcess: @unchecked Sendable {
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    private let process: Process
    private let input: Pipe

    /// Starts `Origin/<script>` and waits for its port.
    public init(script: String, quiet: Bool = false) throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Origin")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", folder.appendingPathComponent(script).path]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        if quiet { process.standardError = FileHandle.nullDevice }
        try process.run()
        self.process = process
        self.input = input
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            throw TestServerError(message: "\(script) printed no port: \(String(decoding: line, as: UTF8.self))")
        }
        self.port = port
    }

    /// The test origin (`Origin/origin.py`), started off the cooperative thread pool (starting
    /// blocks until the script prints its port, and tests run in parallel).
    public static func origin() async throws -> TestServerProcess {
        try await offPool { try TestServerProcess(script: "origin.py") }
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
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
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
