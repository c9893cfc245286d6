import CLibUV
import MonarchFraming

#if canImport(Glibc)
import Glibc
#endif

extension StreamConnection {
    /// The IP address of a TCP stream's peer (`127.0.0.1`, `::1`); nil for a Unix socket, or
    /// when the socket has no peer any more. Loop thread only.
    public var peerHost: String? {
        loop.preconditionInEventLoop()
        guard transport == .tcp, !isClosing else { return nil }
        var storage = sockaddr_storage()
        var length = Int32(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutableBytes(of: &storage) { raw in
            uv_tcp_getpeername(pointer(as: uv_tcp_t.self), raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
        }
        guard result == 0 else { return nil }
        let address = withUnsafeBytes(of: &storage) { raw in
            SocketAddress(sockaddr: raw.baseAddress!.assumingMemoryBound(to: sockaddr.self))
        }
        guard case .tcp(let host, _) = address else { return nil }
        return host
    }
}
