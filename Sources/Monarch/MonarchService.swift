#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MonarchWire

/// One way to ask for resources, whoever answers: ``Monarch`` (a chain of Swift providers in
/// this process), `MonarchClient` (a cluster's coordinator) or ``MonarchPreview`` (preview
/// data and fixture files, no I/O beyond them). Application code and the query layer hold an
/// `any MonarchService` and do not care which.
public protocol MonarchService: Sendable {
    /// The first response the service gets for `request`, whatever its status.
    ///
    /// - Throws: ``MonarchError``; never for a non-2xx response, which is returned.
    func perform(_ request: Request) async throws(MonarchError) -> Response

    /// The decoded answer to a typed request. A non-2xx response is never decoded.
    ///
    /// - Throws: ``MonarchError``: ``MonarchError/upstreamStatus(_:)`` for a non-2xx response,
    ///   ``MonarchError/decoding(type:reason:bodyPrefix:)`` for a body that is not an `R.Response`,
    ///   otherwise what ``perform(_:)-(Request)`` throws.
    func perform<R: MonarchRequest>(_ request: R) async throws(MonarchError) -> R.Response

    /// Drops cached answers shared beyond this process (a cluster's cache workers): the one
    /// under an exact key, or every key with a prefix. Services with no shared cache drop
    /// nothing.
    ///
    /// - Returns: how many entries were removed, and by how many cache workers.
    func invalidate(_ target: InvalidateMessage.Target) async throws(MonarchError) -> Invalidation
}

extension MonarchService {
    /// Performs `request()` and decodes the answer with ``decodeAnswer(_:to:)``.
    public func perform<R: MonarchRequest>(_ request: R) async throws(MonarchError) -> R.Response {
        try Self.decodeAnswer(try await perform(try request.request()), to: request)
    }

    /// Nothing to drop: no entries, no workers.
    public func invalidate(_ target: InvalidateMessage.Target) async throws(MonarchError) -> Invalidation {
        Invalidation(removed: 0, workers: 0)
    }

    /// `response`'s body decoded by `request`.
    ///
    /// - Throws: ``MonarchError/upstreamStatus(_:)`` when the status is not 2xx (the body is
    ///   not decoded), ``MonarchError/decoding(type:reason:bodyPrefix:)`` when it does not decode.
    public static func decodeAnswer<R: MonarchRequest>(_ response: Response, to request: R) throws(MonarchError) -> R.Response {
        guard response.isSuccess else { throw .upstreamStatus(response) }
        do {
            return try request.decode(response.body)
        } catch {
            throw .decoding(R.Response.self, error, body: response.body)
        }
    }
}

/// What an invalidation did across the cluster's cache workers.
public struct Invalidation: Sendable, Equatable {
    /// Entries removed, summed over the workers.
    public var removed: Int
    /// Cache workers that answered.
    public var workers: Int
    /// The keys, key prefixes or tag the coordinator resolved the target to (a path gives its
    /// `GET` and `HEAD` keys, such as `GET api users/1`); empty from a service that does not
    /// report them.
    public var targets: [String]

    /// Creates a report.
    public init(removed: Int, workers: Int, targets: [String] = []) {
        self.removed = removed
        self.workers = workers
        self.targets = targets
    }

    /// Whether nothing was cached under the target: no entry was removed.
    public var matchedNothing: Bool { removed == 0 }
}
