#if canImport(Glibc)
import Glibc
#endif
import CLibUV

extension StreamConnection {
    /// Two connected Unix stream sockets of this process — what is written to one is read from
    /// the other — as descriptors, each to be opened with ``open(socket:on:)`` on the loop that
    /// will use it. A connection inside one process, with no listener and no socket file.
    ///
    /// - Throws: ``UVError`` when the process has no descriptors left.
    public static func socketPair() throws(UVError) -> (Int32, Int32) {
        var descriptors: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &descriptors) == 0 else {
            throw UVError(code: -errno, operation: "create a socket pair")
        }
        return (descriptors[0], descriptors[1])
    }

    /// A stream over `socket`, a connected Unix stream socket this process owns (see
    /// ``socketPair()``); the stream owns the descriptor from now on and closes it with itself,
    /// also when opening fails. Loop thread only.
    ///
    /// - Throws: ``UVError`` when libuv cannot take the descriptor.
    public static func open(socket: Int32, on loop: EventLoop) throws(UVError) -> StreamConnection {
        loop.preconditionInEventLoop()
        let connection: StreamConnection
        do {
            connection = try StreamConnection(loop: loop, transport: .unix)
        } catch {
            Glibc.close(socket)
            throw error
        }
        let result = uv_pipe_open(connection.pointer(as: uv_pipe_t.self), socket)
        guard result == 0 else {
            Glibc.close(socket)
            connection.close()
            throw UVError(code: result, operation: "open a socket on the loop")
        }
        return connection
    }
}
