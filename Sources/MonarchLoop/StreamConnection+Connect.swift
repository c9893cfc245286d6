import MonarchFraming
import CLibUV

extension StreamConnection {
    /// Connects to `address`; `completion` runs once on the loop thread with the connected
    /// stream (not yet reading) or the error. Loop thread only.
    public static func connect(
        to address: SocketAddress, on loop: EventLoop,
        completion: @escaping @Sendable (Result<StreamConnection, UVError>) -> Void
    ) {
        loop.preconditionInEventLoop()
        let connection: StreamConnection
        do {
            connection = try StreamConnection(loop: loop, transport: address.transport)
        } catch {
            completion(.failure(error))
            return
        }
        let request = UnsafeMutablePointer<uv_connect_t>.allocate(capacity: 1)
        request.initialize(to: uv_connect_t())
        let pending = PendingConnect(connection: connection, address: address, completion: completion)
        request.pointee.data = Unmanaged.passRetained(pending).toOpaque()
        let callback: uv_connect_cb = { request, status in
            guard let request else { return }
            let pending = Unmanaged<PendingConnect>.fromOpaque(request.pointee.data!).takeRetainedValue()
            request.deallocate()
            pending.finish(status: status)
        }
        let result: Int32
        switch address {
        case .tcp:
            do {
                result = try address.withSockaddr { sockaddr in
                    uv_tcp_connect(request, connection.pointer(as: uv_tcp_t.self), sockaddr, callback)
                }
            } catch {
                result = error.code
            }
        case .unix:
            do {
                let path = try address.checkedUnixPath(for: "connect to")
                uv_pipe_connect(request, connection.pointer(as: uv_pipe_t.self), path, callback)
                result = 0
            } catch {
                result = error.code
            }
        }
        if result < 0 {
            Unmanaged<PendingConnect>.fromOpaque(request.pointee.data!).release()
            request.deallocate()
            connection.close()
            completion(.failure(UVError(code: result, operation: "connect to \(address)")))
        }
    }

    /// Connects to `address` from any thread; the stream returned is not yet reading.
    ///
    /// - Throws: ``UVError`` when the connection cannot be made (refused, no such socket, …,
    ///   `ECANCELED` when the loop has shut down).
    public static func connect(to address: SocketAddress, on loop: EventLoop) async throws(UVError)
        -> StreamConnection
    {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<StreamConnection, UVError>, Never>) in
            let accepted = loop.enqueue(.closure {
                connect(to: address, on: loop) { continuation.resume(returning: $0) }
            })
            if !accepted {
                continuation.resume(returning: .failure(UVError(code: UVCode.ecanceled, operation: "connect to \(address): loop shut down")))
            }
        }
        return try result.get()
    }
}

extension SocketAddress {
    /// The transport a stream to this address uses.
    var transport: StreamConnection.Transport {
        switch self {
        case .tcp: .tcp
        case .unix: .unix
        }
    }
}

/// A connect in progress: what to finish when libuv reports the outcome.
private final class PendingConnect {
    let connection: StreamConnection
    let address: SocketAddress
    let completion: @Sendable (Result<StreamConnection, UVError>) -> Void

    init(
        connection: StreamConnection, address: SocketAddress,
        completion: @escaping @Sendable (Result<StreamConnection, UVError>) -> Void
    ) {
        self.connection = connection
        self.address = address
        self.completion = completion
    }

    func finish(status: Int32) {
        if status < 0 {
            connection.close()
            completion(.failure(UVError(code: status, operation: "connect to \(address)")))
        } else {
            connection.setNoDelay()
            completion(.success(connection))
        }
    }
}
