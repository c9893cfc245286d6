import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MonarchLoop
import MonarchWire

/// A `monarch up` in a temporary folder for a benchmark: started with a configuration, ready
/// when it says so, stopped (and its folder removed) by ``stop()``.
final class BenchCluster: @unchecked Sendable {
    let folder: String
    let process = Process()
    var clientAddress: SocketAddress { .unix(path: folder + "/c.sock") }

    /// Starts `monarch` (beside this executable) on `body` (everything after `listen`), with
    /// `files` written under the folder first. `$FOLDER` in `body` stands for the folder.
    init(configuration body: String, files: [String: [UInt8]]) throws {
        var template = Array("/tmp/mbench.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw BenchError("mkdtemp failed: errno \(errno)")
        }
        folder = String(cString: made)
        for (path, bytes) in files {
            let url = URL(fileURLWithPath: folder + "/" + path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        }
        let yaml = """
            listen:
              clients: [unix:\(folder)/c.sock]
              workers: unix:\(folder)/w.sock

            """ + body.replacingOccurrences(of: "$FOLDER", with: folder)
        try Data(yaml.utf8).write(to: URL(fileURLWithPath: folder + "/monarch.yml"))
        process.executableURL = URL(fileURLWithPath: ProcessSetup.executableDirectory + "/monarch")
        process.arguments = ["up", "--config", folder + "/monarch.yml", "--log-level", "warning"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // Wait for the ready line (bounded: 60 s).
        let handle = output.fileHandleForReading
        var seen = Data()
        let start = Date()
        while !String(decoding: seen, as: UTF8.self).contains("ready") {
            guard Date().timeIntervalSince(start) < 60, process.isRunning else {
                stop()
                throw BenchError("monarch up did not get ready: \(String(decoding: seen, as: UTF8.self))")
            }
            let chunk = handle.availableData
            if chunk.isEmpty { usleep(10_000) }
            seen += chunk
        }
    }

    /// Stops the cluster (SIGTERM, then SIGKILL after 10 s) and removes its folder.
    func stop() {
        if process.isRunning {
            process.terminate()
            let start = Date()
            while process.isRunning, Date().timeIntervalSince(start) < 10 { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        try? FileManager.default.removeItem(atPath: folder)
    }
}

/// Why a benchmark could not run.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
