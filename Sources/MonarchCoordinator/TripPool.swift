import Monarch

/// A pool a trip hands itself to: the chain of one trip asks ``onTrip(_:)`` for the provider
/// that speaks for the pool on that trip, so the trip (its start, budget, client and notes)
/// reaches the pool as an argument, never as task-local context.
protocol TripPool: RequestProvider {
    /// This pool as `trip`'s chain asks it: every request, write-back and refresh of the chain
    /// goes to the pool on behalf of `trip`.
    func onTrip(_ trip: WorkerPool.Trip) -> any RequestProvider
}

extension WorkerPool: TripPool {
    func onTrip(_ trip: Trip) -> any RequestProvider { PoolOnTrip(pool: self, trip: trip) }
}

extension CachePool: TripPool {
    func onTrip(_ trip: WorkerPool.Trip) -> any RequestProvider { CachePoolOnTrip(pool: self, trip: trip) }
}

/// A worker pool as one trip's chain sees it.
struct PoolOnTrip: RequestProvider {
    let pool: WorkerPool
    let trip: WorkerPool.Trip

    var name: String { pool.name }

    func perform(_ request: Request) async -> ProviderOutcome {
        await pool.perform(request, on: trip)
    }
}

/// A cache pool as one trip's chain sees it: it keeps responses, so the chain writes back to it.
struct CachePoolOnTrip: ResponseStoring {
    let pool: CachePool
    let trip: WorkerPool.Trip

    var name: String { pool.name }

    func perform(_ request: Request) async -> ProviderOutcome {
        await pool.perform(request, on: trip)
    }

    func store(_ response: Response, for request: Request) async {
        await pool.store(response, for: request, on: trip)
    }
}
