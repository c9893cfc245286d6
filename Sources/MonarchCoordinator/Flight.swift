import Monarch
import MonarchLoop

/// One trip down the chain, shared by every identical read that arrives while it is under
/// way. Each waiter keeps its own deadline and may leave on its own (cancel, deadline); the
/// trip is cancelled when its last waiter leaves. The answer goes to every waiter only when it
/// could be kept for all of them (``Response/mayBeShared``); otherwise only the waiter that
/// started the trip gets it, and the others are told to ask alone. Loop thread only.
final class Flight: @unchecked Sendable {
    /// What one waiter gets.
    enum Outcome: Sendable {
        /// The trip's result (or this waiter's own deadline or cancellation).
        case answered(Result<Response, ChainError>)
        /// The answer was for the waiter that started the trip alone (private, sets a cookie,
        /// varies): this waiter must make its own trip.
        case notShared
    }

    private struct Waiter {
        var continuation: CheckedContinuation<Outcome, Never>
        var timer: LoopTimer?
        var startedTheTrip: Bool
    }

    let loop: EventLoop
    /// The misses and failures so far, listed when a waiter's deadline passes.
    private(set) var attempts: [ProviderAttempt] = []
    private var waiters: [Int: Waiter] = [:]
    private var nextWaiter = 0
    private var result: Result<Response, ChainError>?
    private var task: Task<Void, Never>?
    /// Called once when the flight has finished or been abandoned.
    private let onFinish: (Flight) -> Void
    /// The providers the trip asks, in order: the one after the last attempt is being asked.
    private let asked: [String]
    /// How long the trip may run: as long as its longest-waiting waiter.
    private let budget: TripBudget

    /// Starts the trip: `request` down `providers`, within `request.deadline` (the trip's
    /// budget), on behalf of `client` (whose share of the workers the trip uses).
    init(
        request: Request, providers: [any RequestProvider], work: ChainWork, client: Int, loop: EventLoop,
        onFinish: @escaping (Flight) -> Void
    ) {
        self.loop = loop
        self.onFinish = onFinish
        self.asked = ProviderChain.asked(for: request, from: providers).map(\.name)
        let budget = TripBudget(end: request.deadline.map { ContinuousClock.now + $0 })
        self.budget = budget
        task = Task(executorPreference: loop) { [self] in
            let trip = WorkerPool.Trip(start: .now, budget: budget, client: client)
            let result: Result<Response, ChainError> = await WorkerPool.$trip.withValue(trip) {
                do throws(ChainError) {
                    return .success(try await ProviderChain.perform(
                        request, along: providers, refreshes: work.refreshes, background: work.background
                    ) { attempts.append($0) })
                } catch {
                    return .failure(error)
                }
            }
            complete(with: result)
        }
    }

    /// The trip's result, or this waiter's own deadline or cancellation, whichever comes first.
    /// The first waiter is the one that started the trip; a later one with more time extends
    /// the trip's budget to its own deadline.
    func wait(deadline: Duration) async -> Outcome {
        loop.preconditionInEventLoop()
        let waiter = nextWaiter
        nextWaiter += 1
        budget.extend(to: .now + deadline)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if let result {
                    continuation.resume(returning: outcome(of: result, startedTheTrip: waiter == 0))
                } else if Task.isCancelled {
                    continuation.resume(returning: .answered(.failure(cancelled())))
                    // The trip may have been started for this waiter alone.
                    abandonIfUnwanted()
                } else {
                    let timer = try? LoopTimer(on: loop)
                    waiters[waiter] = Waiter(continuation: continuation, timer: timer, startedTheTrip: waiter == 0)
                    timer?.start(afterMs: deadline.wholeMilliseconds) { [unowned self] in
                        leave(waiter, with: .failure(deadlinePassed(deadline)))
                    }
                }
            }
        } onCancel: {
            loop.execute { [self] in leave(waiter, with: .failure(cancelled())) }
        }
    }

    /// What a waiter gets of `result`: all of it when it started the trip, or when the answer
    /// may be shared; otherwise the instruction to ask alone. Failures carry no private data
    /// and are shared.
    private func outcome(of result: Result<Response, ChainError>, startedTheTrip: Bool) -> Outcome {
        if startedTheTrip { return .answered(result) }
        if case .success(let response) = result, !response.mayBeShared { return .notShared }
        return .answered(result)
    }

    /// The error of a waiter whose deadline passed: the attempts so far, and a `timeout` for
    /// the provider being asked.
    private func deadlinePassed(_ deadline: Duration) -> ChainError {
        var attempts = self.attempts
        if attempts.count < asked.count {
            attempts.append(ProviderAttempt(
                provider: asked[attempts.count], outcome: .timeout,
                message: "no answer within \(deadline.wholeMilliseconds) ms"))
        }
        return ChainError(.deadlineExceeded, "no answer within \(deadline.wholeMilliseconds) ms", attempts: attempts)
    }

    private func cancelled() -> ChainError {
        ChainError(.cancelled, "the request was cancelled", attempts: attempts)
    }

    /// Answers one waiter early; the trip is abandoned when nobody waits for it any more.
    private func leave(_ waiter: Int, with result: Result<Response, ChainError>) {
        guard let left = waiters.removeValue(forKey: waiter) else { return }
        left.timer?.close()
        left.continuation.resume(returning: .answered(result))
        abandonIfUnwanted()
    }

    /// Cancels the trip when nobody waits for it any more.
    private func abandonIfUnwanted() {
        if waiters.isEmpty, result == nil, let task {
            self.task = nil
            task.cancel()
            onFinish(self)
        }
    }

    private func complete(with result: Result<Response, ChainError>) {
        self.result = result
        let answered = waiters.values
        waiters.removeAll()
        for waiter in answered {
            waiter.timer?.close()
            waiter.continuation.resume(returning: outcome(of: result, startedTheTrip: waiter.startedTheTrip))
        }
        if task != nil {
            task = nil
            onFinish(self)
        }
    }
}

/// What every trip of the coordinator shares: the background refreshes under way (one per
/// cache key) and the bounded background work (write-backs, refreshes).
struct ChainWork: Sendable {
    /// The background refreshes of `cacheThenRefresh` under way, at most one per cache key.
    let refreshes = RefreshGate()
    /// Write-backs and refreshes, bounded.
    let background: BackgroundWork

    init(backgroundLimit: Int) {
        background = BackgroundWork(limit: backgroundLimit)
    }
}

/// The trips under way, by shared key: a read identical to one in flight joins it instead of
/// starting another. Loop thread only.
final class FlightTable: @unchecked Sendable {
    let loop: EventLoop
    private var flights: [String: Flight] = [:]
    /// Requests that joined a trip already under way.
    private(set) var joined = 0
    /// Trips started.
    private(set) var started = 0
    /// Joiners that made a trip of their own because the shared answer was not for them.
    private(set) var askedAlone = 0
    /// What every trip shares.
    let work: ChainWork

    init(loop: EventLoop, work: ChainWork) {
        self.loop = loop
        self.work = work
    }

    /// Trips under way.
    var count: Int { flights.count }

    /// The chain's answer to `request` for `client`, within `deadline`, sharing the trip of an
    /// identical read in flight when `key` is given. A joiner whose shared answer may not be
    /// handed on (see ``Flight``) makes a trip of its own with the time it has left.
    func run(
        _ request: Request, along providers: [any RequestProvider], key: String?, deadline: Duration, client: Int
    ) async -> Result<Response, ChainError> {
        loop.preconditionInEventLoop()
        let arrived = ContinuousClock.now
        if let key, let underWay = flights[key] {
            joined += 1
            switch await underWay.wait(deadline: deadline) {
            case .answered(let result):
                return result
            case .notShared:
                askedAlone += 1
                let left = max(.zero, deadline - (ContinuousClock.now - arrived))
                var alone = request
                alone.deadline = left
                return await start(alone, along: providers, key: nil, deadline: left, client: client)
            }
        }
        return await start(request, along: providers, key: key, deadline: deadline, client: client)
    }

    /// Starts a trip (shared under `key` when given) and waits for it as its first waiter.
    private func start(
        _ request: Request, along providers: [any RequestProvider], key: String?, deadline: Duration, client: Int
    ) async -> Result<Response, ChainError> {
        started += 1
        let flight = Flight(request: request, providers: providers, work: work, client: client, loop: loop) {
            [unowned self] finished in
            if let key, flights[key] === finished { flights[key] = nil }
        }
        if let key { flights[key] = flight }
        guard case .answered(let result) = await flight.wait(deadline: deadline) else {
            preconditionFailure("the waiter that started a trip always gets its answer")
        }
        return result
    }
}
