#if canImport(Glibc)
import Glibc
#endif

/// Turning a Redis host into an address hiredis connects to without blocking: hiredis 0.14
/// resolves names with a blocking `getaddrinfo` inside `redisAsyncConnect`, so a name is
/// resolved first, on libuv's thread pool.
enum RedisHost {
    /// Whether `host` is an IPv4 or IPv6 address rather than a name.
    static func isNumericAddress(_ host: String) -> Bool {
        var buffer = in6_addr()
        return inet_pton(AF_INET, host, &buffer) == 1 || inet_pton(AF_INET6, host, &buffer) == 1
    }

    /// The first address `host` resolves to, as text. Blocks: thread pool only.
    static func resolve(_ host: String) -> Result<String, RedisAddressError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            return .failure(RedisAddressError(String(cString: gai_strerror(status))))
        }
        defer { freeaddrinfo(list) }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let ok: Bool
        if first.pointee.ai_family == AF_INET6 {
            ok = first.pointee.ai_addr.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                var raw = address.pointee.sin6_addr
                return inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count)) != nil
            }
        } else {
            ok = first.pointee.ai_addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                var raw = address.pointee.sin_addr
                return inet_ntop(AF_INET, &raw, &text, socklen_t(text.count)) != nil
            }
        }
        guard ok else { return .failure(RedisAddressError("no usable address")) }
        return .success(text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
    }
}
