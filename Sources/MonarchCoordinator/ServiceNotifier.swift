#if canImport(Glibc)
import Glibc
#endif

/// Tells a service manager how `monarch up` is doing, by systemd's notification protocol
/// (`Type=notify`): `READY=1` once every worker has registered, `RELOADING=1` then `READY=1`
/// around a reload, `STOPPING=1` when it starts to drain. Does nothing unless the
/// environment names a `NOTIFY_SOCKET`.
public struct ServiceNotifier: Sendable {
    private let socketPath: String?

    /// A notifier for the socket `NOTIFY_SOCKET` names in `environment` (`@name` is an
    /// abstract socket); silent without one.
    public init(environment: [String: String]) {
        let path = environment["NOTIFY_SOCKET"] ?? ""
        socketPath = path.isEmpty ? nil : path
    }

    /// The cluster is up: every configured worker has registered.
    public func ready(status: String) { send("READY=1\nSTATUS=\(status)") }

    /// A reload starts (`READY=1` follows it, through ``ready(status:)``).
    public func reloading() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        send("RELOADING=1\nMONOTONIC_USEC=\(Int(now.tv_sec) * 1_000_000 + Int(now.tv_nsec) / 1000)")
    }

    /// The cluster drains and stops.
    public func stopping() { send("STOPPING=1") }

    /// Sends `message` as one datagram; errors are ignored (the manager may be gone).
    private func send(_ message: String) {
        guard let socketPath else { return }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(socketPath.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (index, byte) in bytes.enumerated() { path[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        let payload = Array(message.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                payload.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, 0, socketAddress, length) }
            }
        }
    }
}
