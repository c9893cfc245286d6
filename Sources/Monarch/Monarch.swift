#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Resource fetching in one process: a chain of Swift providers, no cluster.
///
/// ```swift
/// var monarch = Monarch()
/// monarch.register(MemoryCache(), for: .any)
/// monarch.register(FixtureProvider(), for: .assets)
/// let response = try await monarch.perform(Request(path: "assets/logo.png", domain: .assets))
/// ```
///
/// It is a ``MonarchService``: typed requests (``MonarchRequest``) and the query layer work
/// the same over it as over a cluster's client.
public struct Monarch: MonarchService {
    /// The deadline of requests that set none.
    public static let defaultDeadline: Duration = .seconds(30)

    /// The providers, in the order they are asked.
    public var chain: ProviderChain

    /// A Monarch with `chain` (empty by default).
    public init(chain: ProviderChain = ProviderChain()) { self.chain = chain }

    /// Appends `provider` to the chain for requests of `domain`.
    public mutating func register(_ provider: any RequestProvider, for domain: RequestDomain = .any) {
        chain.register(provider, for: domain)
    }

    /// The first response the chain gives for `request`, within its deadline (30 s unless set).
    ///
    /// - Throws: ``MonarchError`` made from the chain's error (see ``MonarchError/init(_:)``):
    ///   `notFound` when every provider missed, `timeout` when the deadline passed (with the
    ///   outcomes so far), `cancelled`, or `chainFailure` (`exhausted` with a failure,
    ///   `noProviders`, …).
    public func perform(_ request: Request) async throws(MonarchError) -> Response {
        do throws(ChainError) {
            return try await performChain(request)
        } catch {
            throw MonarchError(error)
        }
    }

    /// The chain's answer to `request`, or its error.
    private func performChain(_ request: Request) async throws(ChainError) -> Response {
        let deadline = request.deadline ?? Self.defaultDeadline
        let providers = chain.providers(for: request.domain)
        let outcome: Result<Response, ChainError> = await withTaskGroup(of: Result<Response, ChainError>?.self) { group in
            group.addTask {
                do throws(ChainError) {
                    return .success(try await ProviderChain.perform(request, along: providers, refreshes: chain.refreshes, background: chain.background))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try? await Task.sleep(for: deadline)
                return nil
            }
            let first = await group.next()!
            group.cancelAll()
            guard let answer = first else {
                // The deadline passed, or the caller cancelled (which wakes the deadline task
                // too): the chain, cancelled, returns with what it tried so far.
                let late = await group.next()!!
                if !Task.isCancelled, case .failure(let error) = late, error.code == .cancelled {
                    // The provider cut off by the deadline timed out rather than was cancelled.
                    var attempts = error.attempts
                    if let last = attempts.indices.last, attempts[last].outcome == .cancelled {
                        attempts[last].outcome = .timeout
                    }
                    return .failure(ChainError(.deadlineExceeded, "no answer within \(deadline)", attempts: attempts))
                }
                return late
            }
            return answer
        }
        return try outcome.get()
    }
}
