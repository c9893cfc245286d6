import ArgumentParser
import Foundation

/// Runs every configuration for the C baseline and the Swift layer and prints the ratio.
struct CompareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Run C and Swift echo pairs over TCP and Unix sockets with 1 and 16 frames in flight; print the figures.")

    @Option(help: "Seconds measured per configuration.") var seconds = 3.0
    @Option(help: "Payload bytes per frame.") var payload = 1024
    @Option(help: "Seconds of warm-up per configuration.") var warmup = 0.5
    @Option(help: "Runs per configuration; the median is reported.") var repeats = 3
    @Option(help: "The C baseline executable (default: wire-bench-c beside this one).") var cBinary: String?
    @Flag(help: "Print only the JSON lines of each run.") var json = false

    func run() async throws {
        let ownPath = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let swiftBinary = ownPath.path
        let cBinary = cBinary ?? ownPath.deletingLastPathComponent().appendingPathComponent("wire-bench-c").path
        guard FileManager.default.isExecutableFile(atPath: cBinary) else {
            throw ValidationError("C baseline not found at \(cBinary); build it with `swift build -c release --product wire-bench-c`")
        }
        let implementations: [(name: String, server: [String], client: [String])] = [
            ("c", [cBinary, "server"], [cBinary, "client"]),
            ("swift", [swiftBinary, "server"], [swiftBinary, "client", "--mode", "loop"]),
            ("swift-async-on-loop", [swiftBinary, "server"], [swiftBinary, "client", "--mode", "async-on-loop"]),
            ("swift-async", [swiftBinary, "server"], [swiftBinary, "client", "--mode", "async"]),
        ]
        var table: [String: Double] = [:]
        if !json {
            print("Frame round trips per second, \(payload)-byte JSON frames, \(seconds)s per run, median of \(repeats)")
            print("swift: loop-level API on both sides; swift-async-on-loop: the client awaits AsyncFrameConnection")
            print("in a task that prefers the loop as executor; swift-async: the same on Swift's default executor")
            print("")
        }
        for transport in ["tcp", "unix"] {
            for inflight in [1, 16] {
                for implementation in implementations {
                    var figures: [Double] = []
                    for _ in 0..<repeats {
                        let result = try runPair(
                            transport: transport, server: implementation.server, client: implementation.client,
                            inflight: inflight)
                        if json { print(result.line()) }
                        figures.append(result.perSecond)
                    }
                    let median = figures.sorted()[figures.count / 2]
                    table["\(transport)/\(inflight)/\(implementation.name)"] = median
                    if !json {
                        let base = table["\(transport)/\(inflight)/c"] ?? median
                        let ratio = String(format: "%.0f%%", median / base * 100)
                        print(
                            pad(transport, 5) + pad("inflight \(inflight)", 12) + pad(implementation.name, 21)
                                + pad(String(format: "%.0f rt/s", median), 14) + "\(ratio) of C")
                    }
                }
            }
        }
        if !json {
            let ratios = ["tcp", "unix"].flatMap { transport in
                [1, 16].map { table["\(transport)/\($0)/swift"]! / table["\(transport)/\($0)/c"]! }
            }
            print("")
            print(String(format: "Swift layer, loop API: %.0f%% of C on average, lowest %.0f%%", mean(ratios) * 100, ratios.min()! * 100))
            for name in ["swift-async-on-loop", "swift-async"] {
                let ratios = ["tcp", "unix"].flatMap { transport in
                    [1, 16].map { table["\(transport)/\($0)/\(name)"]! / table["\(transport)/\($0)/c"]! }
                }
                print("Swift layer, \(name): " + String(format: "%.0f%% of C on average, lowest %.0f%%", mean(ratios) * 100, ratios.min()! * 100))
            }
        }
    }

    private func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(values.count) }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    /// Starts a server, waits for its `listening` line, runs one client, stops the server.
    private func runPair(transport: String, server: [String], client: [String], inflight: Int) throws -> BenchResult {
        let address = transport == "tcp" ? "tcp:127.0.0.1:\(try freePort())" : "unix:/tmp/monarch-bench-\(getpid()).sock"
        let serverProcess = Process()
        serverProcess.executableURL = URL(fileURLWithPath: server[0])
        serverProcess.arguments = Array(server.dropFirst()) + [address]
        let serverOutput = Pipe()
        serverProcess.standardOutput = serverOutput
        try serverProcess.run()
        defer {
            if serverProcess.isRunning {
                serverProcess.terminate()
                serverProcess.waitUntilExit()
            }
        }
        let ready = serverOutput.fileHandleForReading.readLine()
        guard ready == "listening" else {
            throw ValidationError("server \(server[0]) did not start (said \(ready ?? "nothing"))")
        }
        let clientProcess = Process()
        clientProcess.executableURL = URL(fileURLWithPath: client[0])
        clientProcess.arguments =
            Array(client.dropFirst()) + [
                address, "--inflight", "\(inflight)", "--seconds", "\(seconds)", "--payload", "\(payload)",
                "--warmup", "\(warmup)",
            ]
        let clientOutput = Pipe()
        clientProcess.standardOutput = clientOutput
        try clientProcess.run()
        let data = clientOutput.fileHandleForReading.readDataToEndOfFile()
        clientProcess.waitUntilExit()
        guard clientProcess.terminationStatus == 0 else {
            throw ValidationError("client \(client[0]) exited with \(clientProcess.terminationStatus)")
        }
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
        serverProcess.terminate()
        serverProcess.waitUntilExit()
        guard serverProcess.terminationStatus == 0 else {
            throw ValidationError("server \(server[0]) exited with \(serverProcess.terminationStatus) on SIGTERM")
        }
        return try JSONDecoder().decode(BenchResult.self, from: Data(line.utf8))
    }

    /// A TCP port on 127.0.0.1 that nothing listens on right now.
    private func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw ValidationError("no free TCP port on 127.0.0.1") }
        return UInt16(bigEndian: address.sin_port)
    }
}

extension FileHandle {
    /// Reads one line (without its newline), or nil at end of file. Blocks.
    func readLine() -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = Glibc.read(fileDescriptor, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1 else { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }
}
