import Monarch
import MonarchLoop
import MonarchWire

/// A trip down the chain driven by loop callbacks instead of a task: each worker pool of the
/// chain is asked from the loop (``WorkerPool/send(_:budget:excluding:reply:)``) and its
/// worker's answer comes back to a callback, which takes it as the chain does
/// (``ChainSteps``): a miss or a failure asks the next provider, a fresh response is the
/// trip's answer. Where the rest must be awaited — no worker has room now (the request waits
/// its turn in the pool's queue), a stale response, a provider that is not a pool — the trip
/// goes on in a task preferring the loop, as every trip did before, so the outcome is the one
/// the task would have had.
///
/// A worker lost mid-request, or an answer that ran out of a budget a later waiter extended,
/// is asked again as ``WorkerPool/perform(_:on:excluding:)`` asks it again. Answers go to
/// `complete` on the loop, never before ``start()`` returns. It runs on ``CoordinatorActor``,
/// as its pools do.
@CoordinatorActor
final class LoopTrip {
    private let steps: ChainSteps
    private let trip: WorkerPool.Trip
    private let budget: TripBudget
    private let loop: EventLoop
    /// Where the trip's misses and failures are told, for its waiters' deadline errors.
    private let attempts: AttemptLog
    /// Called once with the trip's result, on the loop.
    private let complete: @CoordinatorActor (Result<Response, ChainError>) -> Void

    /// The misses and failures so far, in order.
    private var recorded: [ProviderAttempt] = []
    /// The step of the chain being asked.
    private var step = 0
    /// The pool behind the provider at ``step`` (and its cache pool when it is one), found once
    /// per step: nil when it is no pool.
    private var pools: (WorkerPool, CachePool?)?
    /// Workers of the pool being asked that were lost while they had the request.
    private var lost: [String] = []
    /// The budget's end when the request last went out.
    private var sentEnd: ContinuousClock.Instant?
    /// The request out, waiting for its worker's answer.
    private var pending: (worker: WorkerSession, id: MessageID)?
    /// The hot tier's read ticket of the cache pool being asked, and when it was taken.
    private var hotRead: (ticket: UInt64, askedAtMs: Int64)?
    /// Where the trip went on when it had to await.
    private var task: Task<Void, Never>?
    private var started = false
    private var cancelled = false

    init(
        _ steps: ChainSteps, trip: WorkerPool.Trip, loop: EventLoop, clock: MonotonicClock, attempts: AttemptLog,
        complete: @escaping @CoordinatorActor (Result<Response, ChainError>) -> Void
    ) {
        self.steps = steps
        self.trip = trip
        self.budget = trip.budget ?? TripBudget(end: steps.request.deadline.map { clock.now + $0 })
        self.loop = loop
        self.attempts = attempts
        self.complete = complete
    }

    /// Asks the first provider; once only.
    func start() {
        guard !started else { return }
        started = true
        ask(0)
    }

    /// Abandons the trip (nobody waits for it any more): the request out is withdrawn, the
    /// task cancelled, and nothing is completed.
    func cancel() {
        cancelled = true
        if let pending {
            self.pending = nil
            pending.worker.abandon(pending.id)
        }
        endHotRead(keeping: nil)
        task?.cancel()
    }

    private var request: Request { steps.request }

    /// The pool behind the provider at `step`, when it is one a request can be sent to from
    /// the loop; and its cache pool when it is one.
    private func findPools(at step: Int) -> (WorkerPool, CachePool?)? {
        switch steps.provider(at: step) {
        case let pool as WorkerPool: (pool, nil)
        case let cache as CachePool: (cache.pool, cache)
        default: nil
        }
    }

    private func ask(_ step: Int) {
        self.step = step
        lost = []
        pools = findPools(at: step)
        guard let (_, cache) = pools else { return finishInTask(known: nil) }
        if let cache, let hotTier = cache.hotTier, hotTier.tier.isOn, request.method == "GET" {
            hotRead = (hotTier.tier.beginRead(), cache.wallClock.nowMs)
        }
        send()
    }

    /// Sends the request to a worker of the pool at ``step`` with room now, else asks the pool
    /// in a task (where it waits its turn).
    private func send() {
        guard let (pool, _) = pools else { return finishInTask(known: nil) }
        sentEnd = budget.end
        switch pool.send(request, budget: budget, excluding: lost, reply: { [self] worker, reply in replied(worker, reply) }) {
        case .sent(let worker, let id):
            pending = (worker, id)
        case .replied(let worker, let reply):
            // Never before ``start()`` returns: the trip's waiter may not be enlisted yet.
            loop.execute { [self] in CoordinatorActor.assumeIsolated { replied(worker, reply) } }
        case .notNow:
            task = Task { [self, request, trip, lost] in
                let outcome = await pool.perform(request, on: trip, excluding: lost)
                answered(outcome)
            }
        }
    }

    /// What `worker` replied, taken as ``WorkerPool/perform(_:on:excluding:)`` takes it.
    private func replied(_ worker: WorkerSession, _ reply: WorkerSession.Reply) {
        pending = nil
        guard !cancelled else { return }
        switch reply {
        case .answered(.failure(let failure))
        where budget.outgrew(sentEnd) && failure.code.isOutOfTime && request.isIdempotent:
            // It ran out of the budget it was sent with, but a waiter with more time joined.
            send()
        case .answered(let outcome):
            answered(outcome)
        case .lost(let reason) where !request.isIdempotent:
            answered(.failure(ProviderFailure(
                code: .workerLost, message: "\(reason); a \(request.method) request is not retried")))
        case .lost:
            lost.append(worker.id)
            send()
        }
    }

    /// What the pool at ``step`` answered, taken as the chain takes it.
    private func answered(_ outcome: ProviderOutcome) {
        guard !cancelled else { return }
        if let (_, cache) = pools, let cache {
            // As ``CachePool/perform(_:on:)`` does with a worker's answer.
            endHotRead(keeping: cache, outcome: outcome)
            if case .response = outcome { trip.notes.noteCachedEntry() }
        }
        let attempts = self.attempts
        switch steps.take(outcome, at: step, attempts: &recorded, onAttempt: { attempts.append($0) }) {
        case .answer(let response): complete(.success(response))
        case .ask(let next): ask(next)
        case .exhausted(let error): complete(.failure(error))
        case .finishAsync: finishInTask(known: outcome)
        }
    }

    /// Ends the hot tier's read, when one is under way: `cache`'s answer in `outcome` is kept
    /// when it is the worker's own entry (as ``CachePool/performKeepingHot(_:on:)`` keeps it).
    private func endHotRead(keeping cache: CachePool?, outcome: ProviderOutcome? = nil) {
        guard let read = hotRead, let hotTier = (cache ?? pools?.1)?.hotTier else { return }
        hotRead = nil
        if let cache, case .response(var response)? = outcome, response.source ?? cache.name == cache.name {
            response.source = cache.name
            hotTier.tier.keep(response, for: request, ticket: read.ticket, askedAtMs: read.askedAtMs)
        } else {
            hotTier.tier.endRead()
        }
    }

    /// Goes on from ``step`` in a task, as the chain's run would: `known` is what the provider
    /// there answered already (nil: it is asked).
    private func finishInTask(known: ProviderOutcome?) {
        let (steps, step, prior, attempts) = (steps, step, recorded, attempts)
        task = Task(executorPreference: loop) { [self] in
            let result: Result<Response, ChainError>
            do throws(ChainError) {
                result = .success(try await steps.finish(from: step, known: known, prior: prior) { attempts.append($0) })
            } catch {
                result = .failure(error)
            }
            await finishedInTask(result)
        }
    }

    /// The end of the trip that went on in a task: its result, unless it was abandoned.
    private func finishedInTask(_ result: Result<Response, ChainError>) {
        guard !cancelled else { return }
        complete(result)
    }
}
