#if canImport(Glibc)
import Glibc
#endif
import MonarchWire

/// A plain blocking Unix socket for protocol tests that send bytes no well-behaved client
/// would: every read gives up after a receive timeout instead of hanging.
final class RawSocket: @unchecked Sendable {
    let fd: Int32

    init(path: String, receiveTimeoutSeconds: Int = 15) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SpawnError("socket: errno \(errno)") }
        var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw SpawnError("path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            // Not closed here: a class whose initializer throws once every property is set is
            // deinitialized, and deinit closes it (closing twice could close a descriptor
            // another thread has just been given).
            throw SpawnError("connect \(path): errno \(errno)")
        }
    }

    /// A TCP connection to `127.0.0.1:port`, made from the loopback address `source` (another
    /// peer address on the same machine: `127.0.0.2`).
    init(tcpPort port: UInt16, from source: String = "127.0.0.1", receiveTimeoutSeconds: Int = 15) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SpawnError("socket: errno \(errno)") }
        var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        func address(_ host: String, _ port: UInt16) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            return address
        }
        var local = address(source, 0)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var remote = address("127.0.0.1", port)
        let connected = bound == 0 && withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        } == 0
        guard connected else {
            // Closed by deinit, as above.
            throw SpawnError("connect 127.0.0.1:\(port) from \(source): errno \(errno)")
        }
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    /// Writes all of `bytes`; false once the peer is gone.
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// Sends one frame holding `payload`.
    @discardableResult
    func send(payload: [UInt8]) -> Bool {
        let length = UInt32(payload.count)
        return write([UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + payload)
    }

    /// Sends one message.
    @discardableResult
    func send(_ message: WireMessage) -> Bool {
        send(payload: MessageCodec().encode(message))
    }

    /// Exactly `count` bytes; nil at end of file; throws on a receive timeout.
    private func read(_ count: Int) throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let got = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + offset, count - offset, 0) }
            if got < 0 && errno == EINTR { continue }
            if got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { throw TimedOut(what: "a frame", seconds: 15) }
            if got < 0 && errno == ECONNRESET { return nil }
            guard got > 0 else { return nil }
            offset += got
        }
        return buffer
    }

    /// The next message; nil when the peer closed the connection.
    func nextMessage() throws -> WireMessage? {
        guard let header = try read(4) else { return nil }
        let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        guard let payload = try read(length) else { return nil }
        return try MessageCodec().decode(payload)
    }

    /// The next message that is not a ping (pings are answered on the way, as a worker must
    /// answer the coordinator's heartbeats); nil when the peer closed the connection.
    func nextMessageAnsweringPings() throws -> WireMessage? {
        while true {
            let message = try nextMessage()
            guard case .ping(let ping)? = message else { return message }
            send(.pong(PongMessage(id: ping.id)))
        }
    }

    /// Whether the peer has closed the connection (reads until end of file, skipping frames).
    func isClosedByPeer() throws -> Bool {
        while true {
            guard try nextMessage() != nil else { return true }
        }
    }

    /// Says hello as a client (presenting `token`) and returns the answer: the welcome, an
    /// error, or nil when the coordinator closed the connection.
    func greet(token: String? = nil) throws -> WireMessage? {
        send(.hello(Hello(role: .client, token: token)))
        return try nextMessage()
    }
}
