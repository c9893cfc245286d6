import MonarchWire

/// Something that can answer requests: a cache, a folder of files, a network fetcher, a pool
/// of worker processes, or any Swift value.
///
/// A provider answers every request with exactly one ``ProviderOutcome`` and honours task
/// cancellation promptly (returning `.failure` with code `cancelled` is fine), so deadlines hold.
public protocol RequestProvider: Sendable {
    /// The provider's name in sources and aggregated errors (`cache`, `bundle`, …).
    var name: String { get }
    /// Answers `request`: a response, a miss (ask the next provider) or a failure.
    func perform(_ request: Request) async -> ProviderOutcome
}

/// A provider that can keep responses: when a later provider in the chain answers, the chain
/// hands the response to every such provider standing before it (write-back).
public protocol ResponseStoring: RequestProvider {
    /// Keeps `response` as the answer to `request` (under `request.route.cacheKey` where set).
    func store(_ response: Response, for request: Request) async
}

/// One provider's answer to one request.
public enum ProviderOutcome: Sendable, Equatable {
    /// The resource: the chain stops here.
    case response(Response)
    /// Not here: the chain asks the next provider.
    case miss(reason: String?)
    /// An error: recorded, then the chain asks the next provider.
    case failure(ProviderFailure)
}

/// Why a provider could not answer.
public struct ProviderFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why, as a failure code of the wire protocol (`timeout`, `unavailable`, `workerLost`,
    /// `cancelled`, …; open to codes this library does not name).
    public var code: FailureCode
    /// A sentence for a person.
    public var message: String

    /// Creates a failure.
    public init(code: FailureCode, message: String) {
        self.code = code
        self.message = message
    }

    /// The failure a provider reports when its task was cancelled.
    public static let cancelled = ProviderFailure(code: .cancelled, message: "the request was cancelled")

    public var description: String { "\(code): \(message)" }
}
