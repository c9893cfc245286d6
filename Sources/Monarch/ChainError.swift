import MonarchWire

/// What one provider did with a request that it did not answer (as it travels in a `failure`).
public typealias ProviderAttempt = FailureMessage.Attempt

/// The one error a request gets when no provider answered it: why, and what each provider
/// asked did, in chain order.
public struct ChainError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why the request got no answer: a failure code of the wire protocol (section 8 of
    /// Protocols/README.md). The set is open: a code this library does not name travels and
    /// compares as its raw value, so a worker's or a newer coordinator's code survives end to end.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// The code as it travels on the wire (`exhausted`, `overloaded`, …).
        public var rawValue: String

        /// The code whose wire form is `rawValue`; any string is a code.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The code whose wire form is `value`.
        public init(stringLiteral value: String) { self.rawValue = value }

        public var description: String { rawValue }

        /// Every provider asked missed or failed.
        public static let exhausted: Code = "exhausted"
        /// No provider serves the request's domain.
        public static let noProviders: Code = "noProviders"
        /// No route matches the path.
        public static let noRoute: Code = "noRoute"
        /// The path cannot be parsed (empty, `..`, bad percent-encoding, …) or would escape its
        /// upstream (a parameter holding a `/`).
        public static let invalidPath: Code = "invalidPath"
        /// The request names a domain the coordinator does not know.
        public static let unknownDomain: Code = "unknownDomain"
        /// The request is well-formed on the wire but unusable (an unsupported admin message, a
        /// header value with control characters, …).
        public static let invalidRequest: Code = "invalidRequest"
        /// The request is over a configured size limit (path, query, headers), or does not fit
        /// in a frame.
        public static let requestTooLarge: Code = "requestTooLarge"
        /// The answer does not fit in a frame.
        public static let responseTooLarge: Code = "responseTooLarge"
        /// No room for the request: too many in flight on the connection or in the coordinator.
        public static let overloaded: Code = "overloaded"
        /// The deadline passed before any provider answered.
        public static let deadlineExceeded: Code = "deadlineExceeded"
        /// The caller cancelled the request.
        public static let cancelled: Code = "cancelled"
        /// The coordinator is draining and takes no new requests.
        public static let shuttingDown: Code = "shuttingDown"
        /// No worker could do it: none connected, or one that was to start did not.
        public static let unavailable: Code = "unavailable"
        /// The sender's role does not allow it (an admin command from a client).
        public static let forbidden: Code = "forbidden"

        /// The codes this library names.
        public static let known: [Code] = [
            .exhausted, .noProviders, .noRoute, .invalidPath, .unknownDomain, .invalidRequest, .requestTooLarge,
            .responseTooLarge, .overloaded, .deadlineExceeded, .cancelled, .shuttingDown, .unavailable, .forbidden,
        ]
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

    /// The error a `failure` message carries, its code as it came (known to this library or not).
    public init(_ detail: FailureMessage.Detail) {
        self.init(Code(rawValue: detail.code), detail.message, attempts: detail.attempts ?? [])
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
