import ArgumentParser
import Foundation
import Logging
import MonarchLoop
import MonarchTransport
import MonarchWire

#if canImport(Glibc)
import Glibc
#endif

/// Measures `monarch-cache-worker` as a real process, playing its coordinator.
@main
struct CacheBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monarch-cache-bench",
        abstract: "Measure the cache worker: stores per second into SQLite, its memory, and the restart to the first hit.",
        discussion: """
            Starts monarch-cache-worker (from this executable's folder unless --worker is given) on a temporary \
            SQLite file, sends --entries store messages, prints the worker's RSS and the rate; then kills it with \
            SIGKILL, starts it again and prints the time from spawn to the first response read from the file, and \
            the time to answer --lookups random keys.
            """
    )

    @Option(help: "How many entries to store.")
    var entries = 100_000

    @Option(help: "The body size of each entry, in bytes.")
    var bodyBytes = 1024

    @Option(help: "How many store messages may await their result at once.")
    var inFlight = 256

    @Option(help: "How many random keys to look up after the restart (once one at a time, once pipelined).")
    var lookups = 1000

    @Option(help: "The worker's --memory-bytes.")
    var memoryBytes = "64MB"

    @Option(help: "The worker executable; default: monarch-cache-worker beside this one.")
    var worker: String?

    @Option(help: "Give up (and kill the worker) after this many seconds.")
    var timeoutSeconds = 600

    func run() async throws {
        ProcessSetup.start(logLevel: .warning)
        let executable = worker ?? ProcessSetup.executableDirectory + "/monarch-cache-worker"
        guard access(executable, X_OK) == 0 else { throw BenchError("cannot run \(executable)") }
        var template = Array("/tmp/monarch-cache-bench-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw BenchError("cannot create a temporary folder")
        }
        let folder = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let loop = try EventLoop(name: "cache-bench")
        defer { loop.shutdown() }
        let coordinator = try await BenchCoordinator(socketPath: folder + "/coordinator.sock", on: loop)
        let arguments = ["--store", "sqlite:\(folder)/cache.db", "--memory-bytes", memoryBytes, "--log-level", "warning"]
        print("worker: \(executable) \(arguments.joined(separator: " "))")
        print("entries: \(entries) of \(bodyBytes) bytes, \(inFlight) stores in flight at most")

        let timeout = Duration.seconds(timeoutSeconds)
        let outcome: Result<Void, any Error> = await withTaskGroup(of: Result<Void, any Error>?.self) { group in
            group.addTask {
                do {
                    try await withTaskExecutorPreference(loop) {
                        try await measure(coordinator, executable: executable, arguments: arguments, folder: folder)
                    }
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return Task.isCancelled ? nil : .failure(BenchError("timed out after \(timeout)"))
            }
            let first = await group.next()!!
            group.cancelAll()
            return first
        }
        await coordinator.killCurrent()
        await coordinator.close()
        try outcome.get()
    }

    private func measure(_ coordinator: BenchCoordinator, executable: String, arguments: [String], folder: String) async throws {
        // 1. Stores.
        let (first, connection) = try await coordinator.launch(executable, arguments)
        let body = Data((0..<bodyBytes).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }).base64EncodedString()
        let start = ContinuousClock.now
        var sent = 0
        var acknowledged = 0
        var failed = 0
        while acknowledged < entries {
            while sent < entries && sent - acknowledged < inFlight {
                let payload = "{\"type\":\"store\",\"id\":\(sent + 1),\"key\":\"bench/\(sent)\",\"status\":200,"
                    + "\"headers\":{\"content-type\":\"application/octet-stream\"},\"body\":\"\(body)\"}"
                try await connection.send(payload: Array(payload.utf8))
                sent += 1
            }
            switch try await connection.nextMessage() {
            case .result?: acknowledged += 1
            case .failure(let failure)?:
                if failed == 0 { print("first failed store: \(failure.error.code): \(failure.error.message)") }
                failed += 1
                acknowledged += 1
            case .ping(let ping)?: try await connection.send(.pong(PongMessage(id: ping.id)))
            case nil: throw BenchError("the worker closed the connection during the stores")
            default: break
            }
        }
        let storing = ContinuousClock.now - start
        let memory = ProcessMemory(pid: first.pid)
        let fileBytes = (try? FileManager.default.attributesOfItem(atPath: folder + "/cache.db")[.size] as? Int) ?? 0
        let walBytes = (try? FileManager.default.attributesOfItem(atPath: folder + "/cache.db-wal")[.size] as? Int) ?? 0
        print("stored: \(entries - failed) acknowledged, \(failed) failed, in \(Self.format(storing))")
        print("store rate: \(Int(Double(entries) / storing.seconds)) entries/s")
        if let memory {
            print("worker VmRSS after the stores: \(memory.rssKiB / 1024) MiB (\(memory.rssKiB) KiB)")
            print("worker VmHWM (peak RSS): \(memory.peakKiB / 1024) MiB (\(memory.peakKiB) KiB)")
        }
        print("file: \(fileBytes / (1 << 20)) MiB database + \(walBytes / (1 << 20)) MiB WAL")

        // 2. SIGKILL, restart, first hit from the file.
        await coordinator.kill(first)
        await connection.close()
        let spawned = ContinuousClock.now
        let (second, again) = try await coordinator.launch(executable, arguments)
        let registered = ContinuousClock.now
        let firstKey = entries / 2
        try await again.send(.request(RequestMessage(id: 1, path: "bench/\(firstKey)", key: "bench/\(firstKey)")))
        guard case .response(let response)? = try await Self.answer(on: again), response.body?.count == bodyBytes else {
            throw BenchError("the first lookup after the restart was not a hit")
        }
        let firstHit = ContinuousClock.now
        print("restart after SIGKILL: registered \(Self.format(registered - spawned)) after spawn")
        print("restart after SIGKILL: first response (a hit read from SQLite) \(Self.format(firstHit - spawned)) after spawn")

        // 3. Random keys, one at a time, then pipelined.
        var generator = SystemRandomNumberGenerator()
        var nextID: UInt64 = 2
        var hits = 0
        let sequentialStart = ContinuousClock.now
        for _ in 0..<lookups {
            let key = "bench/\(Int.random(in: 0..<entries, using: &generator))"
            try await again.send(.request(RequestMessage(id: nextID, path: key, key: key)))
            nextID += 1
            if case .response? = try await Self.answer(on: again) { hits += 1 }
        }
        let sequential = ContinuousClock.now - sequentialStart
        print("\(lookups) random keys one at a time: \(Self.format(sequential)), \(Self.format(sequential / max(1, lookups))) each, \(hits) hits")

        hits = 0
        var answered = 0
        var asked = 0
        let pipelinedStart = ContinuousClock.now
        while answered < lookups {
            while asked < lookups && asked - answered < 64 {
                let key = "bench/\(Int.random(in: 0..<entries, using: &generator))"
                try await again.send(.request(RequestMessage(id: nextID, path: key, key: key)))
                nextID += 1
                asked += 1
            }
            if case .response? = try await Self.answer(on: again) { hits += 1 }
            answered += 1
        }
        let pipelined = ContinuousClock.now - pipelinedStart
        print("\(lookups) random keys, 64 in flight: \(Self.format(pipelined)), \(Int(Double(lookups) / pipelined.seconds)) lookups/s, \(hits) hits")
        if let memory = ProcessMemory(pid: second.pid) {
            print("worker VmRSS after the lookups: \(memory.rssKiB / 1024) MiB")
        }
        await again.close()
        _ = await second.waitForExit()
    }

    /// The next answer to a request (a response, miss or failure), answering pings meanwhile.
    private static func answer(on connection: AsyncFrameConnection) async throws -> WireMessage? {
        while true {
            switch try await connection.nextMessage() {
            case .ping(let ping)?: try await connection.send(.pong(PongMessage(id: ping.id)))
            case let message?:
                switch message {
                case .response, .miss, .failure: return message
                default: continue
                }
            case nil: throw BenchError("the worker closed the connection")
            }
        }
    }

    private static func format(_ duration: Duration) -> String {
        let seconds = duration.seconds
        if seconds >= 1 { return String(format: "%.2f s", seconds) }
        if seconds >= 0.001 { return String(format: "%.2f ms", seconds * 1000) }
        return String(format: "%.1f µs", seconds * 1_000_000)
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
