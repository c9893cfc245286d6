#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 exchange with a front door on 127.0.0.1, over ``RawSocket``: what the tests of
/// the first minutes and the browser need, with the same receive timeout.
enum HTTPFetch {
    /// The port of the HTTP listener in `monarch up`'s output (its ready line says
    /// `http on tcp:127.0.0.1:PORT`); nil when there is none.
    static func port(inOutput output: String) -> UInt16? {
        guard let range = output.range(of: "http on tcp:127.0.0.1:") else { return nil }
        return UInt16(output[range.upperBound...].prefix { $0.isNumber })
    }

    /// Sends `METHOD target` with `Connection: close` to `127.0.0.1:port` and returns the
    /// whole answer (head and body) once the server closes the connection.
    static func exchange(port: UInt16, method: String = "GET", target: String) throws -> String {
        let socket = try RawSocket(tcpPort: port)
        let request = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
        guard socket.write(Array(request.utf8)) else { throw SpawnError("127.0.0.1:\(port) closed before the request was sent") }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket.fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            answer += buffer[..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }
}

/// A TCP port of 127.0.0.1 this process listens on (and never accepts on) until released:
/// a port another program holds.
final class HeldPort {
    let port: UInt16
    private let fd: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SpawnError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard listening else {
            let code = errno
            close(fd)
            throw SpawnError("cannot listen on 127.0.0.1: errno \(code)")
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(fd) }
}
