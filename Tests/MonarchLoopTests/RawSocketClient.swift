import Foundation

/// A blocking POSIX client for a Unix socket, for tests that need what the loop layer does
/// not offer its users: closing only the writing half, or writing bytes and reading to the end.
enum RawSocketClient {
    /// Connects to `path`, writes `bytes`, shuts the writing half down and returns every byte
    /// the server sends until it closes. Gives up after five seconds of silence.
    static func exchange(path: String, sending bytes: [UInt8]) async throws -> [UInt8] {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try exchangeBlocking(path: path, sending: bytes) })
            }
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private static func exchangeBlocking(path: String, sending bytes: [UInt8]) throws -> [UInt8] {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { throw Failure(description: "connect: errno \(errno)") }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written > 0 else { throw Failure(description: "write: errno \(errno)") }
            offset += written
        }
        shutdown(fd, Int32(SHUT_WR))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return received }
            guard count > 0 else { throw Failure(description: "read: errno \(errno)") }
            received += buffer[0..<count]
        }
    }
}
