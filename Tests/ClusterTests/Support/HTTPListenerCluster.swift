#if canImport(Glibc)
import Glibc
#endif
import Testing

/// `monarch up` in a folder of its own whose configuration has an HTTP listener on
/// `tcp:127.0.0.1:0`, for the tests that speak HTTP to it.
enum HTTPListenerCluster {
    /// Writes `files` (path → bytes) and `configuration` as `monarch.yml` into a fresh folder,
    /// starts `monarch up` there, and runs `body` with the HTTP port it chose and the folder;
    /// then stops it with SIGINT. Returns what it wrote to standard error.
    @discardableResult
    static func run(
        configuration: String, files: [String: [UInt8]] = [:], _ body: (_ port: UInt16, _ folder: String) async throws -> Void
    ) async throws -> String {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        for (path, bytes) in files { try folder.write(path, bytes) }
        try folder.write("monarch.yml", configuration)
        let up = try FirstMinutesTests.start(Executables.monarch, ["up"], in: folder.path)
        defer { _ = up.signal(SIGKILL) }
        try await FirstMinutesTests.waitFor("ready", from: up)
        guard let port = HTTPFetch.port(inOutput: up.standardOutput.text) else {
            Issue.record("no HTTP address in the ready line: \(up.standardOutput.text)")
            return up.standardError.text
        }
        try await body(port, folder.path)
        _ = up.signal(SIGINT)
        _ = try await up.waitForExit(timeout: .seconds(30))
        return up.standardError.text
    }
}
