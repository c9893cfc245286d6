import MonarchFraming
import CLibUV

#if canImport(Glibc)
import Glibc
#endif

/// Accepts stream connections on a TCP address or a Unix-domain socket path.
///
/// Each accepted connection is handed to the `onConnection` callback, not yet reading.
/// A Unix socket file left behind by a dead process is replaced; one that a live process
/// still listens on is not (binding fails with `EADDRINUSE`). A Unix socket file is created
/// readable and writable by its owner alone (`0600`), or also by one group (`0660`) — never
/// with wider permissions, whatever the umask, not even for a moment. The socket file is
/// removed when the listener closes. Loop thread only, except ``close()``.
public final class Listener: LoopHandle, @unchecked Sendable {
    /// The address asked for.
    public let address: SocketAddress
    /// The address actually bound (for `tcp:…:0`, the port the kernel chose).
    public private(set) var boundAddress: SocketAddress
    private let onConnection: @Sendable (StreamConnection) -> Void
    private let transport: StreamConnection.Transport
    /// Whether this listener created the Unix socket file (and so removes it on close).
    private var ownsSocketFile = false
    /// The group a Unix socket file is given to (mode `0660`); nil: owner only (`0600`).
    private let socketGroup: gid_t?

    /// Binds and listens on `address`. Loop thread only.
    ///
    /// - Parameters:
    ///   - socketGroup: for a Unix socket, the group that may connect too (mode `0660`);
    ///     nil leaves it to the owner (`0600`).
    ///   - onConnection: receives each accepted connection on the loop thread.
    /// - Throws: ``UVError`` when the address cannot be bound or listened on, or the socket
    ///   file cannot be given to `socketGroup`.
    public init(
        address: SocketAddress, on loop: EventLoop, backlog: Int32 = 511, socketGroup: gid_t? = nil,
        onConnection: @escaping @Sendable (StreamConnection) -> Void
    ) throws(UVError) {
        self.address = address
        self.boundAddress = address
        self.onConnection = onConnection
        self.socketGroup = socketGroup
        switch address {
        case .tcp:
            transport = .tcp
            try super.init(loop: loop, size: MemoryLayout<uv_tcp_t>.size) {
                uv_tcp_init(loop.uvLoop, $0.assumingMemoryBound(to: uv_tcp_t.self))
            }
        case .unix:
            transport = .unix
            try super.init(loop: loop, size: MemoryLayout<uv_pipe_t>.size) {
                uv_pipe_init(loop.uvLoop, $0.assumingMemoryBound(to: uv_pipe_t.self), 0)
            }
        }
        do {
            try bind()
            try UVError.check(
                uv_listen(pointer(as: uv_stream_t.self), backlog) { server, status in
                    LoopHandle.owner(of: UnsafeMutableRawPointer(server), as: Listener.self)?.accept(status: status)
                }, "listen on \(address)")
        } catch {
            close()
            throw error
        }
    }

    private func bind() throws(UVError) {
        switch address {
        case .tcp:
            _ = try address.withSockaddr { sockaddr throws(UVError) in
                try UVError.check(uv_tcp_bind(pointer(as: uv_tcp_t.self), sockaddr, 0), "bind \(address)")
            }
            // Errors such as EADDRINUSE surface at listen on some systems and at bind on others.
            var storage = sockaddr_storage()
            var length = Int32(MemoryLayout<sockaddr_storage>.size)
            let named = withUnsafeMutableBytes(of: &storage) { raw in
                uv_tcp_getsockname(
                    pointer(as: uv_tcp_t.self), raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
            }
            if named == 0 {
                boundAddress = withUnsafeBytes(of: &storage) { raw in
                    SocketAddress(sockaddr: raw.baseAddress!.assumingMemoryBound(to: sockaddr.self))
                } ?? address
            }
        case .unix:
            let path = try address.checkedUnixPath(for: "bind")
            // The file is created with the umask's permissions: owner only from the start.
            let previousMask = umask(0o177)
            var result = uv_pipe_bind(pointer(as: uv_pipe_t.self), path)
            if result == UVCode.eaddrinuse && UnixSocketProbe.isStale(path: path) {
                unlink(path)
                result = uv_pipe_bind(pointer(as: uv_pipe_t.self), path)
            }
            umask(previousMask)
            try UVError.check(result, "bind \(address)")
            ownsSocketFile = true
            if let socketGroup {
                guard chown(path, uid_t.max, socketGroup) == 0, chmod(path, 0o660) == 0 else {
                    throw UVError(code: -errno, operation: "give \(path) to group \(socketGroup)")
                }
            }
        }
    }

    private func accept(status: Int32) {
        guard status >= 0 else {
            loop.logger.warning("accept on \(address) failed: \(UVError(code: status, operation: "accept"))")
            return
        }
        let connection: StreamConnection
        do {
            connection = try StreamConnection(loop: loop, transport: transport)
        } catch {
            loop.logger.error("cannot create a connection on \(address): \(error)")
            return
        }
        let result = uv_accept(pointer(as: uv_stream_t.self), connection.stream)
        guard result == 0 else {
            loop.logger.warning("accept on \(address) failed: \(UVError(code: result, operation: "accept"))")
            connection.close()
            return
        }
        connection.setNoDelay()
        onConnection(connection)
    }

    override func didClose() {
        if ownsSocketFile, case .unix(let path) = address { unlink(path) }
        super.didClose()
    }
}

/// Tells a Unix socket file left by a dead process from one a live process listens on.
enum UnixSocketProbe {
    /// Whether `path` is a socket file that nothing accepts connections on (connecting is
    /// refused), so it may be replaced. Anything else — a regular file, a directory, a socket
    /// with a live listener, even one whose backlog is full — is left alone. Never blocks.
    static func isStale(path: String) -> Bool {
        var status = stat()
        guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFSOCK else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result != 0 && errno == ECONNREFUSED
    }
}
