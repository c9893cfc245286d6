/// Why a request, or one provider's attempt at it, got no answer: a failure code of the wire
/// protocol (`failure.error.code` and an attempt's `code`; the table of section 8 of
/// Protocols/README.md).
///
/// The set is open: a code this library does not name travels and compares as its raw value,
/// so a worker's or a newer coordinator's code survives end to end. On the wire a code is its
/// raw value, a JSON string.
public struct FailureCode: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The code as it travels on the wire (`exhausted`, `overloaded`, …).
    public var rawValue: String

    /// The code whose wire form is `rawValue`; any string is a code.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The code whose wire form is `value`.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// Reads a code from its JSON string, known to this library or not.
    ///
    /// - Throws: `DecodingError` when the value is not a string.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    /// Writes the code as its JSON string.
    ///
    /// - Throws: what the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }
}

extension FailureCode {
    /// No route matches the path.
    public static let noRoute: FailureCode = "noRoute"
    /// Every provider asked missed or failed; the attempts list each one.
    public static let exhausted: FailureCode = "exhausted"
    /// The deadline passed before an answer.
    public static let deadlineExceeded: FailureCode = "deadlineExceeded"
    /// The caller cancelled the request, or its client went away.
    public static let cancelled: FailureCode = "cancelled"
    /// No room for the request: too many in flight on the connection or in the coordinator, a
    /// queue full, too many invalidations a second; retry later.
    public static let overloaded: FailureCode = "overloaded"
    /// The worker handling the request was lost before answering, and no other worker of its
    /// pool could take it.
    public static let workerLost: FailureCode = "workerLost"
    /// The upstream could not be reached (refused, DNS, TLS, connect timeout).
    public static let connectionFailed: FailureCode = "connectionFailed"
    /// The upstream answered 5xx after the retries, or with a status that is not HTTP's.
    public static let upstreamStatus: FailureCode = "upstreamStatus"
    /// The upstream did not answer within the request's budget.
    public static let timeout: FailureCode = "timeout"
    /// The upstream URL's scheme or host:port is not allowed; no connection was made.
    public static let upstreamNotAllowed: FailureCode = "upstreamNotAllowed"
    /// The upstream redirected to a URL the allow list refuses.
    public static let redirectNotAllowed: FailureCode = "redirectNotAllowed"
    /// The upstream redirected more often than the limit.
    public static let tooManyRedirects: FailureCode = "tooManyRedirects"
    /// The route's upstream URL cannot be parsed.
    public static let invalidUpstream: FailureCode = "invalidUpstream"
    /// Any other transfer error (a broken or unreadable reply).
    public static let fetchFailed: FailureCode = "fetchFailed"
    /// Not allowed: a path that names no file, a bundle entry that is not a regular file, an
    /// admin command the sender's role may not run.
    public static let forbidden: FailureCode = "forbidden"
    /// Well-formed on the wire but unusable (an unsupported admin message, a header value with
    /// control characters, a `store` to a worker that keeps nothing, …).
    public static let invalidRequest: FailureCode = "invalidRequest"
    /// The path cannot be parsed (empty, `..`, bad percent-encoding, …) or would escape its
    /// upstream (a parameter holding a `/`).
    public static let invalidPath: FailureCode = "invalidPath"
    /// The request names a domain the coordinator does not know.
    public static let unknownDomain: FailureCode = "unknownDomain"
    /// No provider serves the request's domain.
    public static let noProviders: FailureCode = "noProviders"
    /// The coordinator is draining and takes no new requests.
    public static let shuttingDown: FailureCode = "shuttingDown"
    /// No worker could do it: none connected, the worker is stopping, or one that was to start
    /// did not.
    public static let unavailable: FailureCode = "unavailable"
    /// A bundle file or a cache entry is there but could not be read.
    public static let readFailed: FailureCode = "readFailed"
    /// The request is over a configured size limit (path, query, headers, an invalidation's
    /// key), or does not fit in a frame.
    public static let requestTooLarge: FailureCode = "requestTooLarge"
    /// The answer does not fit in a frame of the receiver's, or a body is over a worker's limit.
    public static let responseTooLarge: FailureCode = "responseTooLarge"
    /// A cache worker could not keep an entry (disk full, database error).
    public static let storeFailed: FailureCode = "storeFailed"
    /// A cache worker's shared store (Redis) is down or backed off: the entry was dropped, and
    /// the worker reports the outage itself, once.
    public static let storeUnavailable: FailureCode = "storeUnavailable"
    /// A cache worker could not drop entries.
    public static let invalidateFailed: FailureCode = "invalidateFailed"
    /// Some cache workers did not answer an `invalidate`; the others dropped their entries.
    public static let invalidateIncomplete: FailureCode = "invalidateIncomplete"
    /// A cache worker could not remove its expired entries.
    public static let sweepFailed: FailureCode = "sweepFailed"

    /// Every code this library names: exactly the codes of the protocol's table (a test holds
    /// the two together).
    public static let known: [FailureCode] = [
        .noRoute, .exhausted, .deadlineExceeded, .cancelled, .overloaded, .workerLost, .connectionFailed,
        .upstreamStatus, .timeout, .upstreamNotAllowed, .redirectNotAllowed, .tooManyRedirects, .invalidUpstream,
        .fetchFailed, .forbidden, .invalidRequest, .invalidPath, .unknownDomain, .noProviders, .shuttingDown,
        .unavailable, .readFailed, .requestTooLarge, .responseTooLarge, .storeFailed, .storeUnavailable,
        .invalidateFailed, .invalidateIncomplete, .sweepFailed,
    ]

    /// Whether the code says the one who had the request ran out of the time it was given
    /// (`timeout`, `deadlineExceeded`).
    public var isOutOfTime: Bool { self == .timeout || self == .deadlineExceeded }
}
