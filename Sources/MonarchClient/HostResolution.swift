#if canImport(Glibc)
import Glibc
#endif
import Monarch
import MonarchLoop
import MonarchWire

extension SocketAddress {
    /// This address with a TCP host name replaced by its address (`getaddrinfo`, run on
    /// `loop`'s thread pool; the first IPv4 address, else the first IPv6 one); Unix
    /// addresses and numeric hosts as they are.
    ///
    /// - Throws: ``MonarchError/transport(_:)`` (`cannotConnect`) when the name does not resolve.
    func resolved(on loop: EventLoop) async throws(MonarchError) -> SocketAddress {
        guard case .tcp(let host, let port) = self, !Self.isNumeric(host) else { return self }
        let outcome: Result<String, LookupFailure>
        do {
            outcome = try await loop.runOnThreadPool { Self.lookUp(host) }
        } catch {
            throw .transport(.init(.cannotConnect, "cannot resolve \(host): \(error)"))
        }
        switch outcome {
        case .success(let numeric): return .tcp(host: numeric, port: port)
        case .failure(let why): throw .transport(.init(.cannotConnect, "cannot resolve \(host): \(why)"))
        }
    }

    private struct LookupFailure: Error { var why: String }

    private static func isNumeric(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// The first IPv4 address `getaddrinfo` gives for `host` (else its first address), as
    /// text. Blocks.
    private static func lookUp(_ host: String) -> Result<String, LookupFailure> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            return .failure(LookupFailure(why: String(cString: gai_strerror(status))))
        }
        defer { freeaddrinfo(list) }
        var chosen = first
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let entry = next {
            if entry.pointee.ai_family == AF_INET {
                chosen = entry
                break
            }
            next = entry.pointee.ai_next
        }
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(chosen.pointee.ai_addr, chosen.pointee.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 else {
            return .failure(LookupFailure(why: "no numeric form"))
        }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return .success(String(decoding: bytes, as: UTF8.self))
    }
}
