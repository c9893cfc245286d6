import Monarch
import MonarchLoop
import Synchronization

/// One trip down the chain, shared by every identical read that arrives while it is under
/// way. Each waiter keeps its own deadline and may leave on its own (cancel, deadline); the
/// trip is cancelled when its last waiter leaves. The answer goes to every waiter only when it
/// could be kept for all of them (``Response/mayBeShared``); otherwise only the waiter that
/// started the trip gets it, and the others are told to ask alone. A flight's state belongs to
/// its ``FlightTable`` and is touched only in the table's isolation.
final class Flight {
    /// What one waiter gets.
    enum Outcome: Sendable {
        /// The trip's result (or this waiter's own deadline or cancellation).
        case answered(Result<Response, ChainError>)
        /// The answer was for the waiter that started the trip alone (private, sets a cookie,
        /// varies): this waiter must make its own trip.
        case notShared
    }

    struct Waiter {
        var continuation: CheckedContinuation<Outcome, Never>
        var timer: LoopTimer?
        var startedTheTrip: Bool
    }

    /// The table's number for the flight, which libuv's callbacks and the trip's task carry.
    let id: Int
    /// The key identical reads share it under, if any.
    let key: String?
    /// The misses and failures so far, listed when a waiter's deadline passes.
    let attempts = AttemptLog()
    var waiters: [Int: Waiter] = [:]
    var nextWaiter = 0
    /// Waiters enlisted and not answered yet, whether or not they wait already: the trip is
    /// abandoned only when this falls to zero.
    var interested = 0
    var result: Result<Response, ChainError>?
    var task: Task<Void, Never>?
    /// The providers the trip asks, in order: the one after the last attempt is being asked.
    let asked: [String]
    /// How long the trip may run: as long as its longest-waiting waiter.
    let budget: TripBudget

    init(id: Int, key: String?, asked: [String], budget: TripBudget) {
        self.id = id
        self.key = key
        self.asked = asked
        self.budget = budget
    }

    /// What a waiter gets of `result`: all of it when it started the trip, or when the answer
    /// may be shared; otherwise the instruction to ask alone. Failures carry no private data
    /// and are shared.
    func outcome(of result: Result<Response, ChainError>, startedTheTrip: Bool) -> Outcome {
        if startedTheTrip { return .answered(result) }
        if case .success(let response) = result, !response.mayBeShared { return .notShared }
        return .answered(result)
    }

    /// The error of a waiter whose deadline passed: the attempts so far, and a `timeout` for
    /// the provider being asked.
    func deadlinePassed(_ deadline: Duration) -> ChainError {
        var attempts = self.attempts.all
        if attempts.count < asked.count {
            attempts.append(ProviderAttempt(
                provider: asked[attempts.count], outcome: .timeout,
                message: "no answer within \(deadline.wholeMilliseconds) ms"))
        }
        return ChainError(.deadlineExceeded, "no answer within \(deadline.wholeMilliseconds) ms", attempts: attempts)
    }

    func cancelled() -> ChainError {
        ChainError(.cancelled, "the request was cancelled", attempts: attempts.all)
    }
}

/// The attempts of a trip, written by the trip's task and read by its waiters.
final class AttemptLog: Sendable {
    private let attempts = Mutex<[ProviderAttempt]>([])

    /// Adds `attempt`.
    func append(_ attempt: ProviderAttempt) { attempts.withLock { $0.append(attempt) } }

    /// Every attempt so far, in order.
    var all: [ProviderAttempt] { attempts.withLock { $0 } }
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
/// starting another.
///
/// An actor isolated to its loop: the flights' state is touched only on the loop's thread,
/// which the compiler checks; libuv's timers and the trips' tasks enter by flight number.
actor FlightTable {
    /// The loop whose thread the table lives on.
    nonisolated let loop: EventLoop
    private var flights: [Int: Flight] = [:]
    private var shared: [String: Int] = [:]
    private var nextFlight = 0
    /// Requests that joined a trip already under way.
    private(set) var joined = 0
    /// Trips started.
    private(set) var started = 0
    /// Joiners that made a trip of their own because the shared answer was not for them.
    private(set) var askedAlone = 0
    /// What every trip shares.
    nonisolated let work: ChainWork

    init(loop: EventLoop, work: ChainWork) {
        self.loop = loop
        self.work = work
    }

    /// Runs the table's jobs on its loop's thread.
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    /// Trips under way.
    var count: Int { flights.count }

    /// The figures `status` reports: trips started, joined and asked alone.
    var figures: (started: Int, joined: Int, askedAlone: Int) { (started, joined, askedAlone) }

    /// The chain's answer to `request` for `client`, within `deadline`, sharing the trip of an
    /// identical read in flight when `key` is given. A joiner whose shared answer may not be
    /// handed on (see ``Flight``) makes a trip of its own with the time it has left.
    ///
    /// Every decision (join or start, and which waiter is the trip's starter) is taken before
    /// the first suspension: other requests run on the table while this one waits.
    func run(
        _ request: Request, along providers: [any RequestProvider], key: String?, deadline: Duration, client: Int
    ) async -> Result<Response, ChainError> {
        let arrived = ContinuousClock.now
        if let key, let id = shared[key], let underWay = flights[id] {
            joined += 1
            let waiter = enlist(in: underWay, deadline: deadline)
            switch await wait(for: underWay, as: waiter, deadline: deadline) {
            case .answered(let result):
                return result
            case .notShared:
                askedAlone += 1
                let left = max(.zero, deadline - (ContinuousClock.now - arrived))
                var alone = request
                alone.deadline = left
                let flight = start(alone, along: providers, key: nil, deadline: left, client: client)
                return await answer(of: flight, deadline: left)
            }
        }
        let flight = start(request, along: providers, key: key, deadline: deadline, client: client)
        return await answer(of: flight, deadline: deadline)
    }

    /// The answer of the trip `flight`, to the waiter that started it.
    private func answer(of flight: Flight, deadline: Duration) async -> Result<Response, ChainError> {
        guard case .answered(let result) = await wait(for: flight, as: 0, deadline: deadline) else {
            preconditionFailure("the waiter that started a trip always gets its answer")
        }
        return result
    }

    /// Registers a new flight (under `key` when given, its starter enlisted as waiter 0) and
    /// starts its trip.
    private func start(
        _ request: Request, along providers: [any RequestProvider], key: String?, deadline: Duration, client: Int
    ) -> Flight {
        started += 1
        nextFlight += 1
        let budget = TripBudget(end: request.deadline.map { ContinuousClock.now + $0 })
        let flight = Flight(
            id: nextFlight, key: key, asked: ProviderChain.asked(for: request, from: providers).map(\.name), budget: budget)
        flights[flight.id] = flight
        if let key { shared[key] = flight.id }
        // The starter is waiter 0, whoever joins before it begins to wait.
        _ = enlist(in: flight, deadline: deadline)
        let (id, attempts, work) = (flight.id, flight.attempts, work)
        flight.task = Task(executorPreference: loop) { [self] in
            let result = await Self.fly(request, along: providers, work: work, budget: budget, client: client, attempts: attempts)
            await complete(id, with: result)
        }
        return flight
    }

    /// A waiter's number in `flight` (0 for the one that started it), the trip's budget
    /// extended to its `deadline`.
    private func enlist(in flight: Flight, deadline: Duration) -> Int {
        let waiter = flight.nextWaiter
        flight.nextWaiter += 1
        flight.interested += 1
        flight.budget.extend(to: .now + deadline)
        return waiter
    }

    /// The trip itself: `request` down `providers` within `budget`, on behalf of `client`
    /// (whose share of the workers the trip uses).
    private static func fly(
        _ request: Request, along providers: [any RequestProvider], work: ChainWork, budget: TripBudget, client: Int,
        attempts: AttemptLog
    ) async -> Result<Response, ChainError> {
        let trip = WorkerPool.Trip(start: .now, budget: budget, client: client)
        return await WorkerPool.$trip.withValue(trip) {
            do throws(ChainError) {
                return .success(try await ProviderChain.perform(
                    request, along: providers, refreshes: work.refreshes, background: work.background
                ) { attempts.append($0) })
            } catch {
                return .failure(error)
            }
        }
    }

    /// The trip's result, or this waiter's own deadline or cancellation, whichever comes first.
    /// Waiter 0 is the one that started the trip.
    private func wait(for flight: Flight, as waiter: Int, deadline: Duration) async -> Flight.Outcome {
        let id = flight.id
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if let result = flight.result {
                    flight.interested -= 1
                    continuation.resume(returning: flight.outcome(of: result, startedTheTrip: waiter == 0))
                } else if Task.isCancelled {
                    flight.interested -= 1
                    continuation.resume(returning: .answered(.failure(flight.cancelled())))
                    // The trip may have been started for this waiter alone.
                    abandonIfUnwanted(flight)
                } else {
                    let timer = try? LoopTimer(on: loop)
                    flight.waiters[waiter] = Flight.Waiter(continuation: continuation, timer: timer, startedTheTrip: waiter == 0)
                    timer?.start(afterMs: deadline.wholeMilliseconds) { [unowned self] in
                        assumeIsolated { table in
                            guard let flight = table.flights[id] else { return }
                            table.leave(flight, waiter, with: .failure(flight.deadlinePassed(deadline)))
                        }
                    }
                }
            }
        } onCancel: {
            loop.execute { [self] in
                assumeIsolated { table in
                    guard let flight = table.flights[id] else { return }
                    table.leave(flight, waiter, with: .failure(flight.cancelled()))
                }
            }
        }
    }

    /// Answers one waiter early; the trip is abandoned when nobody waits for it any more.
    private func leave(_ flight: Flight, _ waiter: Int, with result: Result<Response, ChainError>) {
        guard let left = flight.waiters.removeValue(forKey: waiter) else { return }
        flight.interested -= 1
        left.timer?.close()
        left.continuation.resume(returning: .answered(result))
        abandonIfUnwanted(flight)
    }

    /// Cancels the trip when nobody waits for it, or is about to, any more.
    private func abandonIfUnwanted(_ flight: Flight) {
        if flight.interested == 0, flight.result == nil, let task = flight.task {
            flight.task = nil
            task.cancel()
            finished(flight)
        }
    }

    /// Hands the trip's result to its waiters.
    private func complete(_ id: Int, with result: Result<Response, ChainError>) {
        guard let flight = flights[id] else { return }
        flight.result = result
        let answered = flight.waiters.values
        flight.waiters.removeAll()
        for waiter in answered {
            flight.interested -= 1
            waiter.timer?.close()
            waiter.continuation.resume(returning: flight.outcome(of: result, startedTheTrip: waiter.startedTheTrip))
        }
        if flight.task != nil {
            flight.task = nil
            finished(flight)
        }
    }

    /// Forgets a flight that has finished or was abandoned.
    private func finished(_ flight: Flight) {
        flights[flight.id] = nil
        if let key = flight.key, shared[key] == flight.id { shared[key] = nil }
    }
}
