#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a request got no usable answer, from any ``MonarchService`` (in-process, cluster or
/// preview): one type to switch on.
///
/// ```swift
/// do {
///     let user = try await service.perform(CurrentUser())
/// } catch .notFound {
///     // no provider has it
/// } catch .upstreamStatus(let response) where response.status == 401 {
///     // log in again
/// } catch {
///     print(error)
/// }
/// ```
public enum MonarchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Every provider asked missed: nothing has the resource. The chain error lists each one.
    case notFound(ChainError)
    /// A provider answered with a status that is not 2xx; the response (status, headers, body)
    /// is kept. Typed requests throw this instead of decoding the body.
    case upstreamStatus(Response)
    /// The chain or the coordinator failed otherwise: a provider failed (each provider's
    /// attempt is in the chain error), no route, an invalid path, an unknown domain, a
    /// request over a limit, an admin command refused. ``ChainError/code`` tells which.
    case chainFailure(ChainError)
    /// The body of a successful response is not a `type`; `bodyPrefix` holds its first bytes
    /// (at most 200, as text).
    case decoding(type: String, reason: String, bodyPrefix: String)
    /// The request's deadline passed before an answer (the coordinator's or the client's own
    /// clock); the chain error lists what was tried.
    case timeout(ChainError)
    /// The calling task was cancelled.
    case cancelled
    /// The coordinator could not be reached, the connection was lost, or it had no room.
    case transport(Transport)

    /// What went wrong between a client and its coordinator.
    public struct Transport: Sendable, Equatable, CustomStringConvertible {
        /// The kinds of transport failure.
        public enum Kind: String, Sendable, Equatable {
            /// No connection could be made, or the coordinator refused the hello.
            case cannotConnect
            /// The connection ended and the request could not be retried (or the client is closed).
            case connectionLost
            /// The coordinator had no room for the request (`overloaded`); retry later.
            case overloaded
            /// The connection was lost while a request that is not idempotent (`POST`, `PATCH`)
            /// was in flight: it may or may not have taken effect, and it was not sent again.
            case outcomeUnknown
        }

        /// What went wrong.
        public var kind: Kind
        /// A sentence for a person.
        public var message: String

        /// Creates a transport failure.
        public init(_ kind: Kind, _ message: String) {
            self.kind = kind
            self.message = message
        }

        public var description: String {
            switch kind {
            case .cannotConnect: "cannot connect to the coordinator: \(message)"
            case .connectionLost: "lost the connection to the coordinator: \(message)"
            case .overloaded: "the coordinator is overloaded: \(message)"
            case .outcomeUnknown: "the connection was lost while the request was in flight; it may or may not have happened: \(message)"
            }
        }
    }

    /// The error for a chain error: `exhausted` with only misses is ``notFound(_:)``;
    /// `deadlineExceeded`, or `exhausted` where a provider ran out of time (attempt outcome
    /// `timeout`, or code `timeout` or `deadlineExceeded`), ``timeout(_:)``; `cancelled`
    /// ``cancelled``; `overloaded` a transport failure; anything else ``chainFailure(_:)``.
    public init(_ chain: ChainError) {
        let timedOut = chain.attempts.contains { attempt in
            attempt.outcome == .timeout || attempt.code?.isOutOfTime == true
        }
        switch chain.code {
        case .exhausted where chain.attempts.allSatisfy({ $0.outcome == .miss }): self = .notFound(chain)
        case .exhausted where timedOut: self = .timeout(chain)
        case .deadlineExceeded: self = .timeout(chain)
        case .cancelled: self = .cancelled
        case .overloaded: self = .transport(Transport(.overloaded, chain.message))
        default: self = .chainFailure(chain)
        }
    }

    /// The chain error this error carries, when a chain or coordinator reported one.
    public var chainError: ChainError? {
        switch self {
        case .notFound(let chain), .chainFailure(let chain), .timeout(let chain): chain
        case .cancelled: ChainError(.cancelled, "cancelled")
        case .transport(let transport) where transport.kind == .overloaded: ChainError(.overloaded, transport.message)
        case .upstreamStatus, .decoding, .transport: nil
        }
    }

    /// The error for a body that did not decode as `type`.
    public static func decoding<T>(_ type: T.Type, _ error: any Error, body: Data) -> MonarchError {
        .decoding(type: "\(type)", reason: "\(error)", bodyPrefix: String(decoding: body.prefix(200), as: UTF8.self))
    }

    public var description: String {
        switch self {
        case .notFound(let chain): "not found: \(chain)"
        case .upstreamStatus(let response):
            "status \(response.status): " + String(decoding: response.body.prefix(200), as: UTF8.self)
        case .chainFailure(let chain): "\(chain)"
        case .decoding(let type, let reason, let prefix): "the body is not a \(type): \(reason); it begins: \(prefix)"
        case .timeout(let chain): "timed out: \(chain)"
        case .cancelled: "cancelled"
        case .transport(let transport): "\(transport)"
        }
    }
}
