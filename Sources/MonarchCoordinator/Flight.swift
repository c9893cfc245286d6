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
/// which the compiler checks. Requests enter from code running on the loop (a task preferring
/// it) synchronously, through `assumeIsolated`, and wait outside the actor, so a waiter costs
/// no hop; libuv's timers and the trips' tasks enter the same way, by flight number.
actor FlightTable {
    /// The loop whose thread the table lives on.
    nonisolated let loop: EventLoop
    /// The flights under way, and finished ones whose result an enlisted waiter has yet to take.
    private var flights: [Int: Flight] = [:]
    /// The flight under way for each shared key.
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

    /// Flights under way (or finished, with a waiter yet to take the result).
    var count: Int { flights.count }

    /// The figures `status` reports: trips started, joined and asked alone.
    var figures: (started: Int, joined: Int, askedAlone: Int) { (started, joined, askedAlone) }

    /// The chain's answer to `request` for `client`, within `deadline`, sharing the trip of an
    /// identical read in flight when `key` is given. A joiner whose shared answer may not be
    /// handed on (see ``Flight``) makes a trip of its own with the time it has left. Called
    /// from a task running on the loop.
    nonisolated func run(
        _ request: Request, along providers: [any RequestProvider], key: String?, deadline: Duration, client: Int
    ) async -> Result<Response, ChainError> {
        let arrived = ContinuousClock.now
        let place = enter(request, along: providers, key: key, deadline: deadline, client: client)
        switch await wait(in: place.flight, as: place.waiter, deadline: deadline) {
        case .answered(let result):
            return result
        case .notShared:
            let left = max(.zero, deadline - (ContinuousClock.now - arrived))
            var alone = request
            alone.deadline = left
            let own = startAlone(alone, along: providers, deadline: left, client: client)
            guard case .answered(let result) = await wait(in: own, as: 0, deadline: left) else {
                preconditionFailure("the waiter that started a trip always gets its answer")
            }
            return result
        }
    }

    /// Joins the flight under way for `key`, or starts one: the flight's number and the
    /// waiter's (0 for the one that started it).
    private nonisolated func enter(
        _ request: Request, along providers: [any RequestProvider], key: String?, deadline: Duration, client: Int
    ) -> (flight: Int, waiter: Int) {
        assumeIsolated { table in
            if let key, let id = table.shared[key], let underWay = table.flights[id] {
                table.joined += 1
                return (id, table.enlist(in: underWay, deadline: deadline))
            }
            return (table.start(request, along: providers, key: key, deadline: deadline, client: client), 0)
        }
    }

    /// Starts a trip of its own for a joiner the shared answer was not for: its number.
    private nonisolated func startAlone(
        _ request: Request, along providers: [any RequestProvider], deadline: Duration, client: Int
    ) -> Int {
        assumeIsolated { table in
            table.askedAlone += 1
            return table.start(request, along: providers, key: nil, deadline: deadline, client: client)
        }
    }

    /// Registers a new flight (under `key` when given, its starter enlisted as waiter 0),
    /// starts its trip, and returns its number.
    private func start(
        _ request: Request, along providers: [any RequestProvider], key: String?, deadline: Duration, client: Int
    ) -> Int {
        started += 1
        nextFlight += 1
        let budget = TripBudget(end: request.deadline.map { ContinuousClock.now + $0 })
        let flight = Flight(
            id: nextFlight, key: key, asked: ProviderChain.asked(for: request, from: providers).map(\.name), budget: budget)
        flights[flight.id] = flight
        if let key { shared[key] = flight.id }
        _ = enlist(in: flight, deadline: deadline)
        let (id, attempts, work) = (flight.id, flight.attempts, work)
        flight.task = Task(executorPreference: loop) { [self] in
            let result = await Self.fly(request, along: providers, work: work, budget: budget, client: client, attempts: attempts)
            complete(id, with: result)
        }
        return flight.id
    }

    /// A waiter's number in `flight`, the trip's budget extended to its `deadline`.
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
    private nonisolated func wait(in flight: Int, as waiter: Int, deadline: Duration) async -> Flight.Outcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let cancelled = Task.isCancelled
                assumeIsolated { $0.register(continuation, in: flight, as: waiter, deadline: deadline, cancelled: cancelled) }
            }
        } onCancel: {
            loop.execute { [self] in
                assumeIsolated { table in
                    guard let flight = table.flights[flight] else { return }
                    table.leave(flight, waiter, with: .failure(flight.cancelled()))
                }
            }
        }
    }

    /// Answers `continuation` at once when the trip is over or the waiter was cancelled;
    /// otherwise keeps it, with a timer for its deadline.
    private func register(
        _ continuation: CheckedContinuation<Flight.Outcome, Never>, in id: Int, as waiter: Int, deadline: Duration,
        cancelled: Bool
    ) {
        guard let flight = flights[id] else {
            preconditionFailure("a flight stays while a waiter it enlisted has not taken its answer")
        }
        if let result = flight.result {
            flight.interested -= 1
            forgetIfDone(flight)
            continuation.resume(returning: flight.outcome(of: result, startedTheTrip: waiter == 0))
        } else if cancelled {
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
            unshare(flight)
            flights[flight.id] = nil
        }
    }

    /// Hands the trip's result to its waiters (from the trip's task, on the loop).
    private nonisolated func complete(_ id: Int, with result: Result<Response, ChainError>) {
        assumeIsolated { table in
            guard let flight = table.flights[id] else { return }
            flight.result = result
            flight.task = nil
            table.unshare(flight)
            let answered = flight.waiters.values
            flight.waiters.removeAll()
            for waiter in answered {
                flight.interested -= 1
                waiter.timer?.close()
                waiter.continuation.resume(returning: flight.outcome(of: result, startedTheTrip: waiter.startedTheTrip))
            }
            table.forgetIfDone(flight)
        }
    }

    /// Stops identical reads from joining `flight`.
    private func unshare(_ flight: Flight) {
        if let key = flight.key, shared[key] == flight.id { shared[key] = nil }
    }

    /// Forgets a finished flight once every waiter it enlisted has taken its answer.
    private func forgetIfDone(_ flight: Flight) {
        if flight.result != nil, flight.interested == 0 { flights[flight.id] = nil }
    }
}
