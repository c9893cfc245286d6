import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MonarchWire
import Synchronization
import TestOrigins

/// A worker played by the test over a raw socket: it registers, answers the coordinator's
/// heartbeat pings by itself (on a thread of its own), and hands every other message to the
/// test, which answers as it likes (or not at all).
final class FakeWorker: Sendable {
    let socket: RawSocket
    private let inbox = Mutex<(messages: [WireMessage], closed: Bool)>(([], false))
    /// Whether pings are answered (a test turns this off to play a worker that hangs).
    let answersPings = Atomic<Bool>(true)

    /// Registers a worker of `kind` called `name` (with `capacity`, when given) at `workerPath`.
    init(
        at workerPath: String, kind: String = "bundle", name: String, capacity: Int? = nil, hostCapacity: Int? = nil,
        token: String? = nil
    ) async throws {
        let socket = try RawSocket(path: workerPath, receiveTimeoutSeconds: 3600)
        self.socket = socket
        let welcome = try await offPool {
            socket.send(.hello(Hello(
                role: .worker, token: token, kind: kind, capacity: capacity, hostCapacity: hostCapacity, pid: 1, name: name)))
            return try socket.nextMessage()
        }
        guard case .welcome? = welcome else { throw SpawnError("\(name) got no welcome: \(String(describing: welcome))") }
        let reader = Thread { [self] in readUntilClosed() }
        reader.start()
    }

    private func readUntilClosed() {
        while true {
            let message = try? socket.nextMessage()
            guard let message else {
                inbox.withLock { $0.closed = true }
                return
            }
            if case .ping(let ping) = message, answersPings.load(ordering: .relaxed) {
                socket.send(.pong(PongMessage(id: ping.id)))
                continue
            }
            if case .ping = message { continue }
            inbox.withLock { $0.messages.append(message) }
        }
    }

    /// The next message the coordinator sends (pings aside); nil when it closed the connection.
    /// Throws after `timeout` seconds.
    func next(timeout: Double = 15) async throws -> WireMessage? {
        let start = ContinuousClock.now
        while true {
            let (message, closed) = inbox.withLock { inbox -> (WireMessage?, Bool) in
                inbox.messages.isEmpty ? (nil, inbox.closed) : (inbox.messages.removeFirst(), false)
            }
            if let message { return message }
            if closed { return nil }
            if ContinuousClock.now - start > .seconds(timeout) { throw TimedOut(what: "a message for the fake worker", seconds: timeout) }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// The next forwarded request (cancels on the way are skipped; ``next(timeout:)`` sees them).
    func nextRequest(timeout: Double = 15) async throws -> RequestMessage {
        while true {
            switch try await next(timeout: timeout) {
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
    func fail(_ id: MessageID, code: FailureCode, _ message: String = "test") {
        socket.send(.failure(FailureMessage(id: id, error: .init(code: code, message: message))))
    }

    /// Closes the worker's side of the connection at once.
    func disconnect() {
        shutdown(socket.fd, Int32(SHUT_RDWR))
    }
}
