import MonarchWire

/// What one provider did with a request that it did not answer (as it travels in a `failure`).
public typealias ProviderAttempt = FailureMessage.Attempt

/// The one error a request gets when no provider answered it: why, and what each provider
/// asked did, in chain order.
public struct ChainError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why the request got no answer.
    public enum Code: String, Sendable, CaseIterable {
        /// Every provider asked missed or failed.
        case exhausted
        /// No provider serves the request's domain.
        case noProviders
        /// No route matches the path.
        case noRoute
        /// The path cannot be parsed (empty, `..`, bad percent-encoding, …).
        case invalidPath
        /// The request names a domain the coordinator does not know.
        case unknownDomain
        /// The request is well-formed on the wire but unusable (an unsupported admin message, …).
        case invalidRequest
        /// The deadline passed before any provider answered.
        case deadlineExceeded
        /// The caller cancelled the request.
        case cancelled
        /// The coordinator is draining and takes no new requests.
        case shuttingDown
    }

    /// Why the request got no answer.
    public var code: Code
    /// A sentence for a person.
    public var message: String
    /// Each provider's outcome, in chain order.
    public var attempts: [ProviderAttempt]

    /// Creates a chain error.
    public init(_ code: Code, _ message: String, attempts: [ProviderAttempt] = []) {
        self.code = code
        self.message = message
        self.attempts = attempts
    }

    /// The error after every provider in `attempts` missed or failed.
    public static func exhausted(_ attempts: [ProviderAttempt]) -> ChainError {
        let summary = attempts.map { attempt in
            "\(attempt.provider): \(attempt.outcome.rawValue)" + (attempt.message.map { " (\($0))" } ?? "")
        }
        return ChainError(.exhausted, "no provider answered: " + summary.joined(separator: "; "), attempts: attempts)
    }

    /// The error as it travels in a `failure` message.
    public var detail: FailureMessage.Detail {
        FailureMessage.Detail(code: code.rawValue, message: message, attempts: attempts.isEmpty ? nil : attempts)
    }

    /// The error a `failure` message carries; an unknown code becomes ``Code/exhausted``.
    public init(_ detail: FailureMessage.Detail) {
        self.init(Code(rawValue: detail.code) ?? .exhausted, detail.message, attempts: detail.attempts ?? [])
    }

    public var description: String {
        var lines = ["\(code.rawValue): \(message)"]
        for attempt in attempts {
            var line = "  \(attempt.provider): \(attempt.outcome.rawValue)"
            if let code = attempt.code { line += " [\(code)]" }
            if let message = attempt.message { line += " \(message)" }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}
