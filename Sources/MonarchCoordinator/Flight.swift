import Monarch
import MonarchLoop
import MonarchWire
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
        /// The trip's result (or this waiter's own deadline or cancellation), and, when the
        /// trip's response goes to several waiters, that response prepared once for all of
        /// their frames.
        case answered(Result<Response, ChainError>, PreparedResponse?)
        /// The answer was for the waiter that started the trip alone (private, sets a cookie,
        /// varies): this waiter must make its own trip.
        case notShared
    }

    struct Waiter {
        /// Hands the waiter its outcome, on the loop.
        var deliver: (Outcome) -> Void
        var timer: LoopTimer?
        var startedTheTrip: Bool
    }

    /// The table's number for the flight, which libuv's callbacks and the trip (its task or
    /// its loop callbacks) carry.
    let id: Int
    /// The key identical reads share it under, if any.
    let key: String?
    /// The misses and failures so far, listed when a waiter's deadline passes.
    let attempts = AttemptLog()
    /// The waiters not answered yet, by their number in the table.
    var waiters = WaiterList()
    /// The trip, when it runs as a task (see ``loopTrip``).
    var task: Task<Void, Never>?
    /// The trip, when loop callbacks drive it (``LoopTrip``).
    var loopTrip: LoopTrip?
    /// The request the trip answers, and the chain it goes down.
    let request: Request
    let providers: [any RequestProvider]
    /// How long the trip may run: as long as its longest-waiting waiter.
    let budget: TripBudget
    /// When the trip started: invalidations after it win over its answer.
    let began: ContinuousClock.Instant
    /// What the trip meets on its way (its write-backs, for ``HeldAnswers``).
    let notes = TripNotes()

    /// Flight `id` of `request` down `providers` within `budget`, beginning at `began`.
    init(
        id: Int, key: String?, request: Request, providers: [any RequestProvider], budget: TripBudget,
        began: ContinuousClock.Instant
    ) {
        self.id = id
        self.key = key
        self.request = request
        self.providers = providers
        self.budget = budget
        self.began = began
    }

    /// The providers the trip asks, in order: the one after the last attempt is being asked.
    /// Worked out only when a waiter's deadline passes.
    var asked: [String] { ProviderChain.asked(for: request, from: providers).map(\.name) }

    /// What a waiter gets of `result` (and its `prepared` response): all of it when it
    /// started the trip, or when the answer may be shared (`shareable`, which
    /// ``isShareable(_:)`` tells); otherwise the instruction to ask alone.
    func outcome(
        of result: Result<Response, ChainError>, prepared: PreparedResponse?, startedTheTrip: Bool, shareable: Bool
    ) -> Outcome {
        startedTheTrip || shareable ? .answered(result, prepared) : .notShared
    }

    /// Whether `result` may go to waiters other than the one that started the trip: failures
    /// carry no private data and are shared; answers when ``Response/mayBeShared``.
    static func isShareable(_ result: Result<Response, ChainError>) -> Bool {
        guard case .success(let response) = result else { return true }
        return response.mayBeShared
    }

    /// The error of a waiter whose deadline passed: the attempts so far, and a `timeout` for
    /// the provider being asked.
    func deadlinePassed(_ deadline: Duration) -> ChainError {
        var attempts = self.attempts.all
        let asked = self.asked
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

/// A flight's waiters by number. The first is kept inline, so that a trip with one waiter
/// (most trips) makes no hash table; the waiters that join it go to one.
struct WaiterList: Sequence {
    private var first: (number: Int, waiter: Flight.Waiter)?
    private var joiners: [Int: Flight.Waiter] = [:]

    /// Whether no waiter is left.
    var isEmpty: Bool { first == nil && joiners.isEmpty }

    /// Adds `waiter` under `number`, a number not in the list.
    mutating func add(_ waiter: Flight.Waiter, as number: Int) {
        if first == nil, joiners.isEmpty { first = (number, waiter) } else { joiners[number] = waiter }
    }

    /// Removes the waiter numbered `number` and returns it; nil when there is none.
    mutating func remove(_ number: Int) -> Flight.Waiter? {
        if let first, first.number == number {
            self.first = nil
            return first.waiter
        }
        return joiners.removeValue(forKey: number)
    }

    /// The waiters and their numbers, the first one first.
    func makeIterator() -> Iterator { Iterator(first: first, joiners: joiners.makeIterator()) }

    /// Goes through the waiters of a list.
    struct Iterator: IteratorProtocol {
        fileprivate var first: (number: Int, waiter: Flight.Waiter)?
        fileprivate var joiners: [Int: Flight.Waiter].Iterator

        /// The next waiter and its number.
        mutating func next() -> (number: Int, waiter: Flight.Waiter)? {
            if let next = first {
                first = nil
                return next
            }
            return joiners.next().map { (number: $0.key, waiter: $0.value) }
        }
    }
}

/// The attempts of a trip, written by the trip (its task or its loop callbacks) and read by
/// its waiters.
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
/// starting another; one that arrives after the trip's answer and before its write-back is
/// stored gets that answer (``HeldAnswers``).
///
/// It runs on ``CoordinatorActor``: the coordinator and its sessions call it directly, and a
/// waiter is answered by a callback in the same isolation, so it needs no task and costs no
/// hop. libuv's timers and the trips' loop callbacks enter through `assumeIsolated`, a trip's
/// task with an await; each finds its flight by number.
@CoordinatorActor
final class FlightTable {
    /// The loop whose thread the table lives on.
    nonisolated let loop: EventLoop
    /// The flights under way, by number.
    private var flights: [Int: Flight] = [:]
    /// The flight under way for each shared key.
    private var shared: [String: Int] = [:]
    /// The flight each waiter not answered yet waits for, by waiter number.
    private var flightOf: [Int: Int] = [:]
    private var nextFlight = 0
    private var nextWaiter = 0
    /// Stopped deadline timers kept for the next waiters, so that a request neither opens nor
    /// closes a libuv handle; at most ``spareTimerLimit``.
    private var spareTimers: [LoopTimer] = []
    /// Whether stopped timers are kept; false once ``closeSpareTimers()`` ran.
    private var keepsSpareTimers = true
    /// Spare deadline timers kept at most.
    static let spareTimerLimit = 256
    /// Requests that joined a trip already under way.
    private(set) var joined = 0
    /// Trips started.
    private(set) var started = 0
    /// Joiners that made a trip of their own because the shared answer was not for them.
    private(set) var askedAlone = 0
    /// What every trip shares.
    nonisolated let work: ChainWork
    /// Where the table reads the time: the coordinator's clock. (Waiters' deadlines are
    /// libuv timers, which fire in real time.)
    nonisolated let clock: MonotonicClock
    /// Answers of ended trips whose write-back is not stored yet, at most
    /// ``BackgroundWork/limit`` of them.
    private var held: HeldAnswers

    /// A table on ``CoordinatorActor/loop`` whose trips share `work`, reading the time on `clock`.
    init(work: ChainWork, clock: MonotonicClock) {
        self.loop = CoordinatorActor.loop
        self.work = work
        self.clock = clock
        self.held = HeldAnswers(capacity: work.background.limit, clock: clock)
    }

    /// Answers held for reads that arrive before their trip's write-back is stored.
    var heldAnswers: Int { held.count }

    /// Flights under way.
    var count: Int { flights.count }

    /// What a waiter is answered with: the result, and the response prepared once for every
    /// waiter of a shared trip.
    typealias Done = @CoordinatorActor @Sendable (Result<Response, ChainError>, PreparedResponse?) -> Void

    /// The figures `status` reports: trips started, joined and asked alone.
    var figures: (started: Int, joined: Int, askedAlone: Int) { (started, joined, askedAlone) }

    /// Asks for the chain's answer to `request` for `client`, within `deadline`, sharing the
    /// trip of an identical read in flight when `key` is given, and calls `done` once with it,
    /// on the loop (never before this returns); a response that goes to several waiters comes
    /// prepared once for all of their frames. A joiner whose shared answer may not be handed
    /// on (see ``Flight``) makes a trip of its own with the time it has left. Returns the
    /// waiter's number, for ``cancel(_:)``.
    func begin(
        _ request: Request, along providers: [any RequestProvider], key: String?, deadline: Duration, client: Int,
        done: @escaping Done
    ) -> Int {
        let clock = clock
        let arrived = clock.now
        let waiter = nextWaiter
        nextWaiter += 1
        let flight: Flight
        let startedTheTrip: Bool
        if let key, shared[key] == nil, let entry = held.answer(for: key) {
            // The trip has ended and its write-back is not stored yet: its answer, as a
            // joiner would have had it.
            joined += 1
            let (response, prepared) = (entry.response, entry.prepared)
            loop.execute { CoordinatorActor.assumeIsolated { done(.success(response), prepared) } }
            return waiter
        } else if let key, let id = shared[key], let underWay = flights[id] {
            joined += 1
            underWay.budget.extend(to: clock.now + deadline)
            (flight, startedTheTrip) = (underWay, false)
        } else {
            (flight, startedTheTrip) = (start(request, along: providers, key: key, deadline: deadline, client: client), true)
        }
        enlist(waiter, in: flight, startedTheTrip: startedTheTrip, deadline: deadline) { [unowned self] outcome in
            switch outcome {
            case .answered(let result, let prepared):
                done(result, prepared)
            case .notShared:
                let left = max(.zero, deadline - (clock.now - arrived))
                var alone = request
                alone.deadline = left
                askedAlone += 1
                let own = start(alone, along: providers, key: nil, deadline: left, client: client)
                enlist(waiter, in: own, startedTheTrip: true, deadline: left) { outcome in
                    guard case .answered(let result, let prepared) = outcome else {
                        preconditionFailure("the waiter that started a trip always gets its answer")
                    }
                    done(result, prepared)
                }
                // Once its waiter is enlisted: a trip answers it, never before.
                own.loopTrip?.start()
            }
        }
        // Once its first waiter is enlisted: a trip answers it, never before.
        if startedTheTrip { flight.loopTrip?.start() }
        return waiter
    }

    /// Answers waiter `waiter` at once with a `cancelled` failure, if it still waits; its trip
    /// is abandoned when nobody else waits for it.
    func cancel(_ waiter: Int) {
        guard let id = flightOf[waiter], let flight = flights[id] else { return }
        leave(flight, waiter, with: .failure(flight.cancelled()))
    }

    /// Registers a new flight (under `key` when given) and starts its trip.
    private func start(
        _ request: Request, along providers: [any RequestProvider], key: String?, deadline: Duration, client: Int
    ) -> Flight {
        started += 1
        nextFlight += 1
        let now = clock.now
        let budget = TripBudget(end: request.deadline.map { now + $0 })
        budget.extend(to: now + deadline)
        let flight = Flight(id: nextFlight, key: key, request: request, providers: providers, budget: budget, began: now)
        flights[flight.id] = flight
        if let key { shared[key] = flight.id }
        let (id, attempts, work) = (flight.id, flight.attempts, work)
        let trip = WorkerPool.Trip(start: flight.began, budget: budget, client: client, notes: flight.notes)
        if let steps = ChainSteps(
            request, along: providers, leg: { ($0 as? any TripPool)?.onTrip(trip) ?? $0 }, refreshes: work.refreshes,
            background: work.background)
        {
            // Driven by loop callbacks, started once its first waiter is enlisted.
            // Held strongly, as a trip's task holds the table, until the flight ends.
            flight.loopTrip = LoopTrip(steps, trip: trip, loop: loop, clock: clock, attempts: attempts) { [self] result in
                complete(id, with: result)
            }
            return flight
        }
        flight.task = Task(executorPreference: loop) { [self] in
            let result = await Self.fly(request, along: providers, work: work, trip: trip, attempts: attempts)
            await complete(id, with: result)
        }
        return flight
    }

    /// The trip itself: `request` down `providers` as `trip` (within its budget, on behalf of
    /// its client, whose share of the workers the trip uses): each pool is handed the trip
    /// (``TripPool/onTrip(_:)``), its write-backs and refreshes included.
    private nonisolated static func fly(
        _ request: Request, along providers: [any RequestProvider], work: ChainWork, trip: WorkerPool.Trip,
        attempts: AttemptLog
    ) async -> Result<Response, ChainError> {
        let legs = Self.legs(of: providers, on: trip)
        do throws(ChainError) {
            return .success(try await ProviderChain.perform(
                request, along: legs, refreshes: work.refreshes, background: work.background
            ) { attempts.append($0) })
        } catch {
            return .failure(error)
        }
    }

    /// The providers as `trip`'s chain asks them: each pool is handed the trip
    /// (``TripPool/onTrip(_:)``), its write-backs and refreshes included.
    private nonisolated static func legs(of providers: [any RequestProvider], on trip: WorkerPool.Trip) -> [any RequestProvider] {
        providers.map { ($0 as? any TripPool)?.onTrip(trip) ?? $0 }
    }

    /// Notes `waiter` in `flight`, answered by `deliver` when the trip ends or the waiter's
    /// `deadline` passes, whichever comes first.
    private func enlist(
        _ waiter: Int, in flight: Flight, startedTheTrip: Bool, deadline: Duration, deliver: @escaping (Flight.Outcome) -> Void
    ) {
        let timer = spareTimers.popLast() ?? (try? LoopTimer(on: loop))
        flight.waiters.add(Flight.Waiter(deliver: deliver, timer: timer, startedTheTrip: startedTheTrip), as: waiter)
        flightOf[waiter] = flight.id
        let id = flight.id
        timer?.start(afterMs: deadline.wholeMilliseconds) { [unowned self] in
            CoordinatorActor.assumeIsolated {
                guard let flight = self.flights[id] else { return }
                self.leave(flight, waiter, with: .failure(flight.deadlinePassed(deadline)))
            }
        }
    }

    /// Answers one waiter early; the trip is abandoned when nobody waits for it any more.
    private func leave(_ flight: Flight, _ waiter: Int, with result: Result<Response, ChainError>) {
        guard let left = flight.waiters.remove(waiter) else { return }
        flightOf[waiter] = nil
        recycle(left.timer)
        if flight.waiters.isEmpty, flight.task != nil || flight.loopTrip != nil {
            // Nobody waits for the trip any more.
            flight.task?.cancel()
            flight.loopTrip?.cancel()
            flight.task = nil
            flight.loopTrip = nil
            unshare(flight)
            flights[flight.id] = nil
        }
        // Last: what the waiter does with its answer may enter the table again.
        left.deliver(.answered(result, nil))
    }

    /// Hands the trip's result to its waiters (from the trip's task or its loop callback, on the loop).
    private func complete(_ id: Int, with result: Result<Response, ChainError>) {
        guard let flight = flights.removeValue(forKey: id) else { return }
        flight.task = nil
        flight.loopTrip = nil
        unshare(flight)
        let answered = flight.waiters
        flight.waiters = WaiterList()
        for (waiter, entry) in answered {
            flightOf[waiter] = nil
            recycle(entry.timer)
        }
        // Last: what a waiter does with its answer may enter the table again.
        // Told once per trip, and only when a waiter joined it.
        let shareable = answered.contains { !$0.waiter.startedTheTrip } && Flight.isShareable(result)
        // A response for several waiters is encoded once for all of them.
        var prepared: PreparedResponse?
        if shareable, case .success(let response) = result { prepared = PreparedResponse(response.message(id: 0)) }
        if case .success(let response) = result { hold(response, prepared: prepared, of: flight) }
        for (_, entry) in answered {
            entry.deliver(flight.outcome(
                of: result, prepared: prepared, startedTheTrip: entry.startedTheTrip, shareable: shareable))
        }
    }

    /// Holds `response`, the answer of `flight`, for the identical reads that arrive before its
    /// write-back is stored, when it is an answer the cache will keep for everyone (see
    /// ``HeldAnswers``).
    private func hold(_ response: Response, prepared: PreparedResponse?, of flight: Flight) {
        let request = flight.request
        guard let key = flight.key, let cacheKey = request.route.cacheKey, request.policy != .noCache else { return }
        let pools = flight.providers.compactMap { $0 as? CachePool }
        // Not an answer a cache gave: that one is kept already. (Checked first: it is the
        // cheapest test, and a cache's answer is the most common.)
        guard !pools.isEmpty, !pools.contains(where: { $0.name == response.source }) else { return }
        guard request.isShareable, response.mayBeShared, response.mayBeStored else { return }
        var hold = HeldAnswers.longestHold
        if let ttl = response.ttl ?? request.route.ttl { hold = min(hold, ttl) }
        for pool in pools { hold = min(hold, pool.invalidationMemory) }
        let began = flight.began
        let tagged = pools.map { ($0, EntryTags.tags(of: response, within: $0.tagLimits)) }
        held.hold(HeldAnswers.Entry(
            flight: flight.id, response: response, prepared: prepared, notes: flight.notes, until: clock.now + hold,
            isInvalidated: { tagged.contains { pool, tags in pool.invalidated(cacheKey, tags: tags, since: began) } }
        ), under: key)
    }

    /// Stops a waiter's deadline timer and keeps it for another waiter, or closes it when
    /// enough are kept.
    private func recycle(_ timer: LoopTimer?) {
        guard let timer else { return }
        timer.stop()
        if keepsSpareTimers && spareTimers.count < Self.spareTimerLimit { spareTimers.append(timer) } else { timer.close() }
    }

    /// Closes the deadline timers kept for later waiters, and from now on closes each timer
    /// when its waiter is answered (the coordinator is closing).
    func closeSpareTimers() {
        keepsSpareTimers = false
        for timer in spareTimers { timer.close() }
        spareTimers.removeAll()
    }

    /// Spare deadline timers kept now.
    var spareTimerCount: Int { spareTimers.count }

    /// Stops identical reads from joining `flight`.
    private func unshare(_ flight: Flight) {
        if let key = flight.key, shared[key] == flight.id { shared[key] = nil }
    }
}
