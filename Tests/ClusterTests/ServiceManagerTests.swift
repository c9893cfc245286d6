import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// A datagram socket standing in for systemd's notification socket.
private final class NotifySocket: Sendable {
    let path: String
    private let descriptor: Int32

    init(path: String) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.utf8.enumerated() { bytes[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard descriptor >= 0, bound == 0 else { throw SpawnError("cannot bind \(path): errno \(errno)") }
    }

    deinit { close(descriptor) }

    /// The next notification waiting, if any.
    func next() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
    }

    /// Waits up to `timeout` seconds for a notification containing `text`.
    func waitFor(_ text: String, timeout: Double = 60) async throws -> String {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < .seconds(timeout) {
            if let message = next() {
                if message.contains(text) { return message }
            } else {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        throw SpawnError("no \(text) on \(path) within \(timeout) s")
    }
}

@Suite("Service manager")
struct ServiceManagerTests {
    @Test("monarch up tells a service manager READY, RELOADING then READY on SIGHUP, STOPPING on SIGTERM; --log-format json writes JSON lines, its workers' too")
    func notifiesAndLogsJSON() async throws {
        try await ClusterGate.inTurn { try await notifyAndLogJSON() }
    }

    private func notifyAndLogJSON() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try folder.write("files/a.txt", "a\n")
        try folder.write("monarch.yml", """
            listen: {clients: unix:run/c.sock, workers: unix:run/w.sock}
            domains: {static: [bundle]}
            routes: [{match: "...", domain: static}]
            workers: {bundle: {root: files}}

            """)
        let manager = try NotifySocket(path: folder.path + "/notify.sock")
        let up = try FirstMinutesTests.start(
            Executables.monarch, ["up", "--log-format", "json"], in: folder.path,
            environment: ["NOTIFY_SOCKET": manager.path])
        defer { _ = up.signal(SIGKILL) }
        let ready = try await manager.waitFor("READY=1")
        #expect(ready.contains("STATUS=monarch: ready"), "\(ready)")

        _ = up.signal(SIGHUP)
        let reloading = try await manager.waitFor("RELOADING=1")
        #expect(reloading.contains("MONOTONIC_USEC="), "\(reloading)")
        _ = try await manager.waitFor("READY=1")

        _ = up.signal(SIGTERM)
        _ = try await manager.waitFor("STOPPING=1")
        guard let exit = try await up.waitForExit(timeout: .seconds(30)) else {
            Issue.record("monarch up still running after SIGTERM")
            return
        }
        #expect(exit.status == 0)

        let lines = up.standardError.text.split(separator: "\n")
        #expect(lines.count >= 3, "\(up.standardError.text)")
        var labels: Set<String> = []
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["level"] is String && object?["message"] is String && object?["time"] is String, "\(line)")
            if let label = object?["label"] as? String { labels.insert(label) }
        }
        #expect(labels.contains("monarch"), "\(labels)")
        #expect(labels.contains { $0.hasPrefix("bundle") }, "a worker logs JSON too: \(labels)")
    }
}
