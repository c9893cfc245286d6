#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MonarchWire
import TestOrigins

/// A worker played by the test over a raw socket: it registers, then the test reads what the
/// coordinator forwards and answers as it likes (or not at all). Blocking reads run off the
/// shared thread pool.
final class FakeWorker: Sendable {
    let socket: RawSocket

    /// Registers a worker of `kind` called `name` (with `capacity`, when given) at `workerPath`.
    init(at workerPath: String, kind: String = "bundle", name: String, capacity: Int? = nil, token: String? = nil) async throws {
        let socket = try RawSocket(path: workerPath)
        self.socket = socket
        let welcome = try await offPool {
            socket.send(.hello(Hello(role: .worker, token: token, kind: kind, capacity: capacity, pid: 1, name: name)))
            return try socket.nextMessage()
        }
        guard case .welcome? = welcome else { throw SpawnError("\(name) got no welcome: \(String(describing: welcome))") }
    }

    /// The next message the coordinator sends, pings answered on the way; nil when it closed.
    func next() async throws -> WireMessage? {
        let socket = socket
        return try await offPool {
            while true {
                let message = try socket.nextMessage()
                if case .ping(let ping)? = message {
                    socket.send(.pong(PongMessage(id: ping.id)))
                    continue
                }
                return message
            }
        }
    }

    /// The next forwarded request (cancels on the way are returned by ``next()`` only).
    func nextRequest() async throws -> RequestMessage {
        while true {
            switch try await next() {
            case .request(let request)?: return request
            case .cancel?: continue
            case let other?: throw SpawnError("expected a request, got \(other.type)")
            case nil: throw SpawnError("the coordinator closed the worker's connection")
            }
        }
    }

    /// Answers request `id` with a 200 carrying `body` and `headers`.
    func respond(_ id: MessageID, _ body: String, headers: [String: String] = [:]) {
        socket.send(.response(ResponseMessage(id: id, status: 200, source: "fake", headers: headers, body: Data(body.utf8))))
    }

    /// Answers request `id` with a failure of `code`.
    func fail(_ id: MessageID, code: String, _ message: String = "test") {
        socket.send(.failure(FailureMessage(id: id, error: .init(code: code, message: message))))
    }
}
