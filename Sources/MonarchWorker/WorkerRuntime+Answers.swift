import Logging
import Monarch
import MonarchLoop
import MonarchTransport
import MonarchWire

// Sending what the worker answers: within the frame limit the coordinator announced, with
// nothing dropped silently (see ``WorkerRuntime``).
extension WorkerRuntime {
    /// Sends `answer` after the answers sent before it from the same task. One too large for a
    /// frame goes out as a `responseTooLarge` failure for the same id instead (carrying
    /// `source`, when given, as its one attempt, as a provider's failure does).
    ///
    /// When `source` is given, `answer` answers a request: it is counted as it is sent (the
    /// failure replacing it in its place), whether or not it could be sent. What cannot be sent
    /// is logged at error level and counted as unsent.
    func send(_ answer: WireMessage, answering source: String? = nil, on connection: AsyncMessageConnection) async {
        if source != nil { state.withLock { $0.counters.count(answer) } }
        var problem: String?
        do {
            try await deliver(answer, on: connection)
        } catch let error as FrameError {
            let limit = state.withLock { $0.limits.maxFrameBytes }
            let why = "\(Self.describe(answer)) is \(error.payloadLength) bytes as JSON, more than the coordinator's frame limit of \(limit) bytes"
            if let id = answer.id {
                let failure = Self.failure(replacing: id, because: why, source: source)
                state.withLock { state in
                    state.counters.tooLarge += 1
                    if source != nil { state.counters.recount(answer, as: failure) }
                }
                logger.warning("answering \(id) with responseTooLarge: \(why)")
                do {
                    try await deliver(failure, on: connection)
                } catch let error as FrameError {
                    problem = "cannot answer the coordinator: \(why); not even the responseTooLarge failure (\(error.payloadLength) bytes) fits"
                } catch {
                    problem = "could not send \(Self.describe(failure)) to the coordinator: \(error)"
                }
            } else {
                problem = "cannot answer the coordinator: \(why)"
            }
        } catch {
            problem = "could not send \(Self.describe(answer)) to the coordinator: \(error)"
        }
        if let problem {
            state.withLock { $0.counters.unsent += 1 }
            logger.error("\(problem)")
        }
    }

    /// Sends `message`; from a cancelled task (a cancelled request still gets its answer), from
    /// a task of its own, since a cancelled one would give up waiting for the connection to
    /// drain.
    private func deliver(_ message: WireMessage, on connection: AsyncMessageConnection) async throws {
        if Task.isCancelled {
            try await Task(executorPreference: loop) { try await connection.send(message) }.value
        } else {
            try await connection.send(message)
        }
    }

    /// The `responseTooLarge` failure that goes out, for `id`, instead of an answer too large.
    private static func failure(replacing id: MessageID, because why: String, source: String?) -> WireMessage {
        guard let source else {
            return .failure(FailureMessage(id: id, error: .init(code: .responseTooLarge, message: why)))
        }
        return ProviderOutcome.failure(ProviderFailure(code: .responseTooLarge, message: why)).message(id: id, source: source)
    }

    /// "the response answering 7", "a pong".
    private static func describe(_ message: WireMessage) -> String {
        message.id.map { "the \(message.type) answering \($0)" } ?? "a \(message.type)"
    }
}
