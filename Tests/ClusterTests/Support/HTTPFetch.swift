#if canImport(Glibc)
import Glibc
#endif

/// Where `monarch up` serves HTTP (exchanges go through ``HTTPProbe``).
enum HTTPFetch {
    /// The port of the HTTP listener in `monarch up`'s output (its ready line says
    /// `http on tcp:127.0.0.1:PORT`); nil when there is none.
    static func port(inOutput output: String) -> UInt16? {
        guard let range = output.range(of: "http on tcp:127.0.0.1:") else { return nil }
        return UInt16(output[range.upperBound...].prefix { $0.isNumber })
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
