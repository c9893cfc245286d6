#if canImport(Glibc)
import Glibc
#endif
import Monarch
import MonarchLoop
import MonarchTransport
import MonarchWire

// Opening a link: over a socket (dial, hello, welcome, adopt), or over a connection made
// inside the process whose first message is the welcome.
extension ClientLink {
    /// Connects to `address` on `loop`, says hello with `token`, adopts the welcome and starts
    /// the link (``started(over:welcome:heartbeat:onPush:onEnd:)``).
    ///
    /// - Throws: ``MonarchError/transport(_:)`` (`cannotConnect`) when the connection cannot
    ///   be made, the coordinator refuses the hello, or does not welcome it within `handshakeTimeout`.
    static func open(
        to address: SocketAddress, on loop: EventLoop, token: String?, heartbeat: Duration?, handshakeTimeout: Duration,
        onPush: @escaping @Sendable (WireMessage) -> Void, onEnd: @escaping @Sendable (ClientLink, String) -> Void
    ) async throws(MonarchError) -> ClientLink {
        let connection: AsyncMessageConnection
        do {
            connection = try await AsyncMessageConnection.connect(to: address, on: loop)
        } catch {
            throw .transport(.init(.cannotConnect, "\(address): \(error)"))
        }
        let welcome = try await welcome(on: connection, from: "\(address)", within: handshakeTimeout) {
            try await connection.send(.hello(Hello(role: .client, token: token, pid: Int(getpid()), features: WireFeature.supported)))
        }
        return started(over: connection, welcome: welcome, heartbeat: heartbeat, onPush: onPush, onEnd: onEnd)
    }

    /// Starts a link over `connection`, made inside the process and accepted already: its first
    /// message is the coordinator's `welcome` (as ``MonarchClient/connect(inProcess:options:_:)``
    /// promises), read within `handshakeTimeout`. `name` names the coordinator in errors.
    ///
    /// - Throws: ``MonarchError/transport(_:)`` (`cannotConnect`) when the first message is no
    ///   welcome, or none comes within `handshakeTimeout`.
    static func open(
        over connection: any MessageConnection, name: String, heartbeat: Duration?, handshakeTimeout: Duration,
        onPush: @escaping @Sendable (WireMessage) -> Void, onEnd: @escaping @Sendable (ClientLink, String) -> Void
    ) async throws(MonarchError) -> ClientLink {
        let wrapped: AsyncMessageConnection
        do {
            wrapped = try await connection.loop.submit { AsyncMessageConnection(connection) }
        } catch {
            connection.close()
            throw .transport(.init(.cannotConnect, "\(name): \(error)"))
        }
        let welcome = try await welcome(on: wrapped, from: name, within: handshakeTimeout) {}
        return started(over: wrapped, welcome: welcome, heartbeat: heartbeat, onPush: onPush, onEnd: onEnd)
    }

    /// Runs `greet`, then reads the coordinator's welcome and adopts it
    /// (``AsyncMessageConnection/adopt(_:)``), all within `timeout` (a coordinator that accepts
    /// but never answers must not hold the dial); closes `connection` on any failure.
    private static func welcome(
        on connection: AsyncMessageConnection, from name: String, within timeout: Duration, greet: () async throws -> Void
    ) async throws(MonarchError) -> Welcome {
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            connection.close()
        }
        defer { watchdog.cancel() }
        do {
            try await greet()
            switch try await connection.nextMessage() {
            case .welcome(let welcome):
                try await connection.adopt(welcome)
                return welcome
            case .error(let error):
                throw MonarchError.transport(.init(.cannotConnect, "\(name) refused: \(error.code.rawValue): \(error.message)"))
            case let other?:
                throw MonarchError.transport(.init(.cannotConnect, "\(name) answered hello with \(other.type)"))
            case nil:
                throw MonarchError.transport(.init(
                    .cannotConnect, "\(name) closed the connection (or did not answer hello within \(timeout))"))
            }
        } catch {
            connection.close()
            if let error = error as? MonarchError { throw error }
            throw .transport(.init(.cannotConnect, "\(name): \(error)"))
        }
    }
}
