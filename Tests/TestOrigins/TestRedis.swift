import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A real `redis-server` for the tests, on 127.0.0.1 and a free port, with a temporary folder
/// of its own and no persistence. It runs under a small shell that stops it when the test
/// process's pipe to it closes, so it cannot outlive the tests even if they crash. It can be
/// stopped and started again on the same port (a Redis restart).
///
/// There is no skipping: when `redis-server` is not installed (Debian: `redis-server`;
/// `scripts/install-deps` installs it), starting fails and so does the test.
public final class TestRedis: Sendable {
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    /// The password it requires, or nil.
    public let password: String?
    private let folder: String
    private let running = Mutex<SpawnedProcess?>(nil)

    /// Starts a Redis on a free port (requiring `password` when given) and waits until it
    /// answers `PING`.
    public init(password: String? = nil) throws {
        self.password = password
        self.folder = try Self.temporaryFolder()
        self.port = try freeLocalPort()
        try startNow()
    }

    /// Starts one, off the cooperative thread pool (starting waits for it to answer).
    public static func start(password: String? = nil) async throws -> TestRedis {
        try await offPool { try TestRedis(password: password) }
    }

    /// `redis://127.0.0.1:PORT/DB`.
    public func url(database: Int = 0) -> String { "redis://127.0.0.1:\(port)/\(database)" }

    /// Stops Redis and waits until it has exited (its port is then closed).
    public func stop() async {
        try? await offPool { self.stopNow() }
    }

    /// Starts Redis again on the same port, after ``stop()``, and waits until it answers.
    public func restart() async throws {
        try await offPool { try self.startNow() }
    }

    /// Stops Redis and removes its folder.
    public func remove() async {
        await stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Runs one command with `redis-cli` and returns what it printed (trimmed).
    public func cli(_ arguments: String...) async throws -> String {
        var full = ["-h", "127.0.0.1", "-p", String(port)]
        if let password { full += ["-a", password, "--no-auth-warning"] }
        full += arguments
        let command = full
        return try await offPool {
            let process = try SpawnedProcess(
                executable: try Self.executable("redis-cli"), arguments: command, standardInput: .null,
                standardOutput: .collect, standardError: .standardOutput)
            _ = process.blockingWaitForExit(timeout: .seconds(30))
            while !process.standardOutput.isClosed { usleep(1_000) }
            return process.standardOutput.text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    private func startNow() throws {
        var arguments = [
            "--port", String(port), "--bind", "127.0.0.1", "--dir", folder, "--save", "", "--appendonly", "no",
            "--daemonize", "no", "--loglevel", "warning", "--enable-debug-command", "local",
        ]
        if let password { arguments += ["--requirepass", password] }
        let server = try Self.executable("redis-server")
        // The shell stops Redis when its standard input closes, then waits for it to exit.
        let started = try SpawnedProcess(
            executable: "/bin/sh",
            arguments: ["-c", "\"$0\" \"$@\" & pid=$!; cat >/dev/null; kill $pid; wait $pid", server] + arguments,
            standardInput: .pipe, standardOutput: .null, standardError: .inherit)
        running.withLock { $0 = started }
        let start = ContinuousClock.now
        while !answersPing() {
            guard ContinuousClock.now - start < .seconds(60), started.isRunning else {
                stopNow()
                throw TestServerError(message: "redis-server did not answer PING on 127.0.0.1:\(port)")
            }
            usleep(10_000)
        }
    }

    private func stopNow() {
        guard let process = running.withLock({ running -> SpawnedProcess? in
            defer { running = nil }
            return running
        }) else { return }
        process.closeStandardInput()
        if process.blockingWaitForExit(timeout: .seconds(30)) == nil {
            _ = process.signal(SIGKILL)
            _ = process.blockingWaitForExit(timeout: .seconds(30))
        }
    }

    /// Whether Redis answers `PING` (with `+PONG`, or `-NOAUTH` when it wants a password).
    private func answersPing() -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return false }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let ping = Array("PING\r\n".utf8)
        guard send(fd, ping, ping.count, Int32(MSG_NOSIGNAL)) == ping.count else { return false }
        var reply = [UInt8](repeating: 0, count: 64)
        let count = read(fd, &reply, reply.count)
        guard count > 0 else { return false }
        let text = String(decoding: reply[..<count], as: UTF8.self)
        return text.hasPrefix("+PONG") || text.hasPrefix("-NOAUTH")
    }

    /// The path of `name` on the PATH (or in /usr/bin, /usr/local/bin).
    static func executable(_ name: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for folder in path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin", "/usr/sbin"] {
            let candidate = folder + "/" + name
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw TestServerError(
            message: "\(name) is not installed: the Redis store's tests need a real Redis (Debian: apt-get install redis-server; scripts/install-deps does it)")
    }

    private static func temporaryFolder() throws -> String {
        var template = Array("/tmp/monarch-redis-test-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw TestServerError(message: "mkdtemp failed: \(String(cString: strerror(errno)))")
        }
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
