#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How one exchange of ``CurlMulti/fetch(_:)`` ended: the upstream's answer (whatever its
/// status), or the reason there is none.
public enum FetchResult: Sendable, Equatable {
    /// The upstream answered; any status, redirects included (they are not followed).
    case answered(FetchedResponse)
    /// There is no answer.
    case failed(FetchFailure)
}

/// The last response of one exchange (a `100 Continue` before it is not kept).
public struct FetchedResponse: Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// The headers, by name as the upstream sent it; a repeated header's values are joined
    /// with ", ".
    public var headers: HTTPHeaders
    /// The body, decoded when it arrived gzip- or deflate-encoded; empty for `HEAD`.
    public var body: Data
    /// Where a redirect points, resolved against the request's URL; nil when the response is
    /// no redirect or names no `Location`.
    public var redirectURL: String?

    /// Creates a response record.
    public init(status: Int, headers: HTTPHeaders, body: Data, redirectURL: String? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.redirectURL = redirectURL
    }
}

/// Why an exchange has no answer.
public struct FetchFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in the terms the provider decides on.
    public enum Kind: Sendable, Equatable {
        /// No connection could be made or it broke before the answer was complete (refused,
        /// reset, name not resolved, TLS handshake failed, connect timeout, truncated body):
        /// worth retrying for an idempotent request.
        case connectionFailed
        /// The exchange's total timeout passed.
        case timeout
        /// The body (or its announced `Content-Length`) exceeds the spec's limit.
        case responseTooLarge
        /// The caller's task was cancelled, or the multi closed, before the answer.
        case cancelled
        /// Anything else libcurl reports (a malformed answer, an unusable URL, …).
        case other
    }

    /// What went wrong.
    public var kind: Kind
    /// libcurl's `CURLcode`, or 0 when the failure is not libcurl's.
    public var curlCode: Int32
    /// A sentence for a person.
    public var message: String

    /// Creates a failure.
    public init(kind: Kind, curlCode: Int32 = 0, message: String) {
        self.kind = kind
        self.curlCode = curlCode
        self.message = message
    }

    public var description: String { message }
}
