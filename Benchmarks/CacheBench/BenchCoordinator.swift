import Foundation
import MonarchLoop
import MonarchTransport
import MonarchWire
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The coordinator's side of one worker, played by the benchmark: a Unix socket the worker
/// dials, the handshake, and the worker process itself.
final class BenchCoordinator: Sendable {
    let loop: EventLoop
    let address: SocketAddress
    private let listener: Listener
    private let connections: AsyncStream<AsyncFrameConnection>
    /// The worker running now, so that a timeout can kill it.
    private let current = Mutex<ChildProcess?>(nil)

    /// Listens on `socketPath`.
    init(socketPath: String, on loop: EventLoop) async throws {
        let (connections, continuation) = AsyncStream.makeStream(of: AsyncFrameConnection.self)
        let address = SocketAddress.unix(path: socketPath)
        listener = try await loop.submit {
            try Listener(address: address, on: loop) { stream in
                continuation.yield(AsyncFrameConnection(FrameConnection(stream: stream)))
            }
        }
        self.loop = loop
        self.address = address
        self.connections = connections
    }

    /// Starts the worker at `executable` with `arguments` (the coordinator's address is
    /// added), accepts its connection and answers its hello with a welcome.
    func launch(_ executable: String, _ arguments: [String]) async throws -> (ChildProcess, AsyncFrameConnection) {
        let address = self.address
        let child = try await loop.submit {
            try ChildProcess(
                executable: executable, arguments: ["--coordinator", "\(address)"] + arguments, on: self.loop
            ) { _ in }
        }
        current.withLock { $0 = child }
        var iterator = connections.makeAsyncIterator()
        guard let connection = await iterator.next() else { throw BenchError("the listener stopped") }
        guard case .hello(let hello)? = try await connection.nextMessage(), hello.kind == "cache" else {
            throw BenchError("the worker did not say hello as a cache worker")
        }
        try await connection.send(.welcome(Welcome(workerId: "cache-bench")))
        return (child, connection)
    }

    /// Kills the worker (SIGKILL) and waits for it to exit.
    func kill(_ child: ChildProcess) async {
        loop.execute { child.signal(SIGKILL) }
        _ = await child.waitForExit()
        current.withLock { if $0 === child { $0 = nil } }
    }

    /// Kills whatever worker runs now; for timeouts and errors.
    func killCurrent() async {
        if let child = current.withLock({ $0 }) { await kill(child) }
    }

    func close() async {
        await listener.closeAndWait()
    }
}

/// What went wrong in the benchmark.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The worker's memory, from `/proc/PID/status`.
struct ProcessMemory {
    /// Resident set size now, in KiB.
    var rssKiB: Int
    /// The peak resident set size, in KiB.
    var peakKiB: Int

    init?(pid: Int32) {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        func field(_ name: String) -> Int? {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        guard let rss = field("VmRSS"), let peak = field("VmHWM") else { return nil }
        rssKiB = rss
        peakKiB = peak
    }
}
