import MonarchWire

/// What one provider did with a request that it did not answer (as it travels in a `failure`).
public typealias ProviderAttempt = FailureMessage.Attempt

extension ProviderAttempt {
    /// The attempt of `provider` that failed with `failure`, as the chain records it: a
    /// `cancelled` failure is a cancelled attempt, any other a failed one.
    public init(_ provider: String, failed failure: ProviderFailure) {
        self.init(
            provider: provider, outcome: failure.code == .cancelled ? .cancelled : .failure, code: failure.code,
            message: failure.message)
    }
}

/// The one error a request gets when no provider answered it: why, and what each provider
/// asked did, in chain order.
public struct ChainError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why the request got no answer: a failure code of the wire protocol (``FailureCode``,
    /// section 8 of Protocols/README.md), open to codes this library does not name.
    public typealias Code = FailureCode

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
        FailureMessage.Detail(code: code, message: message, attempts: attempts.isEmpty ? nil : attempts)
    }

    /// The error a `failure` message carries, its code as it came (known to this library or not).
    public init(_ detail: FailureMessage.Detail) {
        self.init(detail.code, detail.message, attempts: detail.attempts ?? [])
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
