import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on 127.0.0.1 in front of a server on `targetPort` that holds back every chunk
/// the server sends for ``delayMs`` (0: none): a server that answers, but slowly. Blocking
/// sockets, a thread per direction of each connection; ``close()`` ends it all.
final class SlowProxy: Sendable {
    /// The port it listens on.
    let port: Int
    private let listener: Int32
    private let targetPort: Int
    private let delay = Atomic<Int>(0)
    private let sockets = Mutex<[Int32]>([])
    private let closed = Atomic<Bool>(false)

    /// How long each chunk from the server is held back, in milliseconds.
    var delayMs: Int {
        get { delay.load(ordering: .relaxed) }
        set { delay.store(newValue, ordering: .relaxed) }
    }

    init(to targetPort: Int) throws {
        self.targetPort = targetPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, bound == 0, listen(fd, 16) == 0 else { throw POSIXFailure(call: "bind", code: errno) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Stops accepting and closes every connection.
    func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        for fd in sockets.withLock({ $0 }) { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        while !closed.load(ordering: .relaxed) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: targetPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                Glibc.close(client)
                Glibc.close(server)
                continue
            }
            sockets.withLock { $0 += [client, server] }
            Thread.detachNewThread { [self] in pump(from: client, to: server, delayed: false) }
            Thread.detachNewThread { [self] in pump(from: server, to: client, delayed: true) }
        }
    }

    private func pump(from source: Int32, to destination: Int32, delayed: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            if delayed, delayMs > 0 { usleep(UInt32(delayMs) * 1000) }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { write(destination, $0.baseAddress! + sent, count - sent) }
                guard written > 0 else { break }
                sent += written
            }
            guard sent == count else { break }
        }
        shutdown(destination, Int32(SHUT_RDWR))
        shutdown(source, Int32(SHUT_RDWR))
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
