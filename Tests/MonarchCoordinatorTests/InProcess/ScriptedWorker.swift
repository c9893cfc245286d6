#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MonarchWire

/// A worker whose answers the test gives, request by request.
final class ScriptedWorker: Sendable {
    /// Its connection: frames on a socket pair, or an in-memory end.
    let connection: any TestLink
    private let inbox = Inbox()

    /// A worker on `connection`; unless `answersPings`, pings are kept with the other messages,
    /// unanswered.
    init(connection: any TestLink, answersPings: Bool = true) {
        self.connection = connection
        let inbox = inbox
        Task {
            while let message = try? await connection.nextMessage() {
                if answersPings, case .ping(let ping) = message {
                    try? await connection.send(.pong(PongMessage(id: ping.id)))
                    continue
                }
                inbox.put(message)
            }
            inbox.finish()
        }
    }

    /// The next request the coordinator forwards.
    func nextRequest() async throws -> RequestMessage {
        guard case .request(let request) = try await inbox.take(timeout: 30, where: { if case .request = $0 { true } else { false } })
        else { throw InProcessError("not a request") }
        return request
    }

    /// The next message of any kind but a request.
    func nextOther() async throws -> WireMessage {
        try await inbox.take(timeout: 30) { if case .request = $0 { false } else { true } }
    }

    /// Messages received and not taken yet.
    var pending: [WireMessage] { inbox.pending }

    /// Answers request `id` with a 200 holding `body`.
    func respond(_ id: MessageID, _ body: String, headers: [String: String]? = nil) async throws {
        try await respond(id, bytes: Data(body.utf8), headers: headers)
    }

    /// Answers request `id` with a 200 holding `bytes`.
    func respond(_ id: MessageID, bytes: Data, headers: [String: String]? = nil) async throws {
        try await connection.send(.response(ResponseMessage(
            id: id, status: 200, source: "scripted", headers: headers, body: bytes)))
    }

    /// Answers request `id` with a miss.
    func miss(_ id: MessageID) async throws {
        try await connection.send(.miss(MissMessage(id: id, source: "scripted", reason: "not here")))
    }

    /// Whether the coordinator closed the connection (within `timeout` seconds).
    func closed(within timeout: Double = 30) async -> Bool {
        await inbox.finished(within: timeout)
    }

    /// Drops the connection, as a worker that dies does.
    func die() async {
        await connection.close()
    }
}
