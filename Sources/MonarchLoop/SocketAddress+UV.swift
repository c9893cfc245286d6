import MonarchFraming
import CLibUV

#if canImport(Glibc)
import Glibc
#endif

extension SocketAddress {
    /// Fills a `sockaddr_storage` for a TCP address; `localhost` means 127.0.0.1.
    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>) throws(UVError) -> T) throws(UVError) -> T {
        guard case .tcp(let host, let port) = self else {
            preconditionFailure("withSockaddr is for TCP addresses")
        }
        var storage = sockaddr_storage()
        let numericHost = host == "localhost" ? "127.0.0.1" : host
        let result: Int32 = withUnsafeMutableBytes(of: &storage) { raw in
            if numericHost.contains(":") {
                return uv_ip6_addr(numericHost, Int32(port), raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self))
            }
            return uv_ip4_addr(numericHost, Int32(port), raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self))
        }
        try UVError.check(result, "parse host \"\(host)\" of \(self) (a numeric IP address or localhost)")
        return try withUnsafeBytes(of: &storage) { raw throws(UVError) in
            try body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self))
        }
    }

    /// The path of a Unix-domain address, refused with `ENAMETOOLONG` when the kernel cannot
    /// take it — libuv would otherwise cut it short and reach another file.
    func checkedUnixPath(for operation: String) throws(UVError) -> String {
        guard case .unix(let path) = self else {
            preconditionFailure("checkedUnixPath is for Unix-domain addresses")
        }
        guard path.utf8.count <= UVCode.maxUnixPathBytes else {
            throw UVError(code: UVCode.enametoolong, operation: "\(operation) \(self)")
        }
        return path
    }

    /// Reads a TCP address back from a `sockaddr` (as returned by getsockname).
    init?(sockaddr pointer: UnsafePointer<sockaddr>) {
        var name = [CChar](repeating: 0, count: 64)
        switch Int32(pointer.pointee.sa_family) {
        case AF_INET:
            let ipv4 = UnsafeRawPointer(pointer).assumingMemoryBound(to: sockaddr_in.self)
            uv_ip4_name(ipv4, &name, name.count)
            self = .tcp(host: Self.string(fromCString: name), port: UInt16(bigEndian: ipv4.pointee.sin_port))
        case AF_INET6:
            let ipv6 = UnsafeRawPointer(pointer).assumingMemoryBound(to: sockaddr_in6.self)
            uv_ip6_name(ipv6, &name, name.count)
            self = .tcp(host: Self.string(fromCString: name), port: UInt16(bigEndian: ipv6.pointee.sin6_port))
        default:
            return nil
        }
    }

    private static func string(fromCString bytes: [CChar]) -> String {
        String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
