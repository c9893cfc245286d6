import Monarch

/// A pool a trip hands itself to: the chain of one trip asks ``onTrip(_:)`` for the provider
/// that speaks for the pool on that trip, so the trip (its start, budget, client and notes)
/// reaches the pool as an argument, never as task-local context.
protocol TripPool: RequestProvider {
    /// Answers `request` on behalf of `trip` (nil: outside any trip).
    func perform(_ request: Request, on trip: WorkerPool.Trip?) async -> ProviderOutcome
}

extension TripPool {
    /// This pool as `trip`'s chain asks it: every request, write-back and refresh of the chain
    /// goes to the pool on behalf of `trip`.
    func onTrip(_ trip: WorkerPool.Trip) -> any RequestProvider { PoolOnTrip(pool: self, trip: trip) }
}

extension WorkerPool: TripPool {}
extension CachePool: TripPool {}

/// A pool as one trip's chain sees it.
struct PoolOnTrip<Pool: TripPool>: RequestProvider {
    let pool: Pool
    let trip: WorkerPool.Trip

    var name: String { pool.name }

    func perform(_ request: Request) async -> ProviderOutcome {
        await pool.perform(request, on: trip)
    }
}

/// A cache pool on a trip keeps responses, so the chain writes back to it.
extension PoolOnTrip: ResponseStoring where Pool == CachePool {
    func store(_ response: Response, for request: Request) async {
        await pool.store(response, for: request, on: trip)
    }
}
