import Monarch

/// A request that changes something, followed by the invalidation of what it changed: the
/// cluster's cached copies are dropped and the live queries on those keys refetch.
///
/// ```swift
/// let rename = queries.mutation(RenameUser.self) { _ in [.key(QueryKey(path: "users/me", domain: .api))] }
/// try await rename.perform(RenameUser(name: "Ada"))   // live queries of users/me now hold the new name
/// ```
public struct Mutation<R: MonarchRequest>: Sendable {
    let queries: QueryClient
    let invalidates: @Sendable (R) -> [QueryMatch]

    /// Performs `request`, then invalidates what the mutation names for it, and returns once
    /// the live queries on those keys have refetched.
    ///
    /// - Throws: the request's ``MonarchError`` (nothing is invalidated then); after the
    ///   request succeeded, ``MonarchError/chainFailure(_:)`` when the cluster's caches could
    ///   not be invalidated — the change happened, cached copies may be stale.
    @discardableResult
    public func perform(_ request: R) async throws(MonarchError) -> R.Response {
        let answer = try await queries.service.perform(request)
        do throws(MonarchError) {
            try await queries.invalidate(invalidates(request))
        } catch {
            throw .chainFailure(ChainError(
                error.chainError?.code ?? .invalidateFailed,
                "the mutation succeeded, but cached copies could not be invalidated: \(error)"))
        }
        return answer
    }
}
