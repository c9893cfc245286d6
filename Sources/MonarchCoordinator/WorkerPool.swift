import Monarch
import MonarchLoop
import MonarchWire

/// The workers of one kind, as one provider of the chain: each request goes to the worker
/// with the fewest requests in flight, never past a worker's capacity. When every worker is
/// full, requests wait in a queue served in turns between clients (``FairQueue``), so one
/// client's thousand slow requests cost another client's request at most one turn. A worker
/// lost mid-request costs only that attempt: an idempotent request moves to another worker of
/// the pool, and only when none is left does the pool report a failure (and the chain moves
/// on). It runs on ``CoordinatorActor``, as the coordinator does; a chain's task asks it with an
/// await, a loop trip (``LoopTrip``) calls ``send(_:budget:excluding:reply:)`` directly.
@CoordinatorActor
final class WorkerPool: RequestProvider {
    /// How a request finds its worker.
    enum Placement: Sendable {
        /// Any worker will do: the least loaded one with room.
        case leastLoaded
        /// A request with a cache key goes to the worker owning the key (rendezvous hashing on
        /// the workers' shard names), and waits for that worker when it is full; one without a
        /// key goes to the least loaded worker.
        case byCacheKey
    }

    /// The trip down the chain a request belongs to, handed to the pools of its chain
    /// (``TripPool/onTrip(_:)``).
    struct Trip: Sendable {
        /// When the trip started: write-backs of a trip that started before an invalidation of
        /// their key are dropped.
        var start: ContinuousClock.Instant
        /// When the trip must be over, so each worker is handed the budget that is left
        /// (protocol section 5), not the whole of it; it grows when a waiter with more time joins.
        var budget: TripBudget?
        /// The client session the trip is for: whose turn it takes in the queues.
        var client: Int
        /// What the trip met on its way, for the write-back's `changed` events.
        var notes = TripNotes()
    }

    /// What a request waiting for a worker is handed.
    private enum Grant {
        /// A slot on this worker, reserved.
        case worker(WorkerSession)
        /// The workers changed: choose again.
        case retry
        /// The request was cancelled while it waited.
        case cancelled
    }

    private struct Waiting {
        var continuation: CheckedContinuation<Grant, Never>
        var excluded: [String]
    }

    /// Where a request waits for a slot: its worker's lane (see ``lane(of:)``) and its upstream host.
    private struct LaneKey: Hashable {
        var lane: String
        var host: String
    }

    /// What changes as workers come and go and requests wait.
    private struct State {
        var workers: [WorkerSession] = []
        /// Where the search for the least loaded worker starts, so ties rotate.
        var cursor = 0
        /// Requests waiting for a slot, by lane and host.
        var lanes: [LaneKey: FairQueue<Waiting>] = [:]
        /// Where the hand-out of free slots starts among a lane's hosts, so hosts take turns.
        var hostTurn = 0
        var nextTicket = 0
        var queued = 0
        var knownShards: Set<String> = []
        /// Says whether a worker, by id, was chosen to go before it registered.
        var drainsOnArrival: (@CoordinatorActor (String) -> Bool)?
    }

    /// The workers' kind, which is also the provider's name.
    nonisolated let kind: String
    /// What the workers are to the coordinator: a cache pool's workers keep responses.
    nonisolated let role: PoolRole
    /// The loop the pool runs on: ``CoordinatorActor/loop``.
    nonisolated let loop: EventLoop
    /// How a request finds its worker: by its cache key in a cache pool, else the least loaded.
    nonisolated let placement: Placement
    private var state = State()
    /// Where the pool reads the time (a request's budget left): the coordinator's clock.
    nonisolated let clock: MonotonicClock

    /// A pool of `kind` workers, in `role`, reading the time on `clock`.
    nonisolated init(kind: String, role: PoolRole = .provider, clock: MonotonicClock) {
        self.kind = kind
        self.role = role
        self.loop = CoordinatorActor.loop
        self.clock = clock
        self.placement = role == .cache ? .byCacheKey : .leastLoaded
    }

    nonisolated var name: String { kind }

    /// The registered workers, in registration order.
    var workers: [WorkerSession] { state.workers }

    /// Requests that waited for a slot.
    var queued: Int { state.queued }

    /// The shard names of every worker that has registered: one missing from the connected
    /// workers may come back with what it kept (a cache worker's file).
    var knownShards: Set<String> { state.knownShards }

    /// Requests waiting for a slot now.
    var waitingCount: Int { state.lanes.values.reduce(0) { $0 + $1.count } }

    /// The queues of waiting requests kept (one per lane and upstream host that has any).
    var waitingQueueCount: Int { state.lanes.count }

    /// Adds a registered worker; it leaves the pool when its connection ends. A worker that
    /// ``setDrainsOnArrival(_:)``'s test names arrives draining: it never takes a request.
    ///
    func add(_ worker: WorkerSession) {
        if state.drainsOnArrival?(worker.id) == true { worker.isDraining = true }
        state.workers.append(worker)
        state.knownShards.insert(worker.shardName)
        worker.onSlotFreed = { [unowned self] worker in grantSlots(of: worker) }
        grantSlots(of: worker)
        // Keys may have a new owner now: requests waiting for the old one choose again.
        if placement == .byCacheKey { retryAllWaiting() }
    }

    /// Removes a worker whose connection ended.
    func remove(_ worker: WorkerSession) {
        state.workers.removeAll { $0 === worker }
        takeOutOfRotation(worker)
    }

    /// Has ``add(_:)`` ask `test`, by id, whether a registering worker was chosen to go (a
    /// scale chose it while it was starting): such a worker arrives draining.
    func setDrainsOnArrival(_ test: @escaping @CoordinatorActor (String) -> Bool) {
        state.drainsOnArrival = test
    }

    /// Sends requests to `worker` again, a draining worker kept after all (a later scale wants
    /// it), and hands it the requests waiting in its lane.
    func returnToRotation(_ worker: WorkerSession) {
        guard worker.isDraining, worker.lostReason == nil else { return }
        worker.isDraining = false
        grantSlots(of: worker)
    }

    /// Sends no more requests to `worker` (it is draining, unresponsive or gone): requests
    /// waiting in its lane choose again when no serving worker of that lane is left.
    func takeOutOfRotation(_ worker: WorkerSession) {
        let lane = lane(of: worker)
        if !workers.contains(where: { $0.isServing && self.lane(of: $0) == lane }) {
            for key in Array(state.lanes.keys) where key.lane == lane {
                guard var queue = state.lanes.removeValue(forKey: key) else { continue }
                for request in queue.removeAll() { request.continuation.resume(returning: .retry) }
            }
        }
    }

    /// The connected workers (serving, draining or not yet known to be unresponsive).
    var connected: [WorkerSession] { workers.filter { $0.lostReason == nil } }

    /// The workers that take new requests.
    var serving: [WorkerSession] { workers.filter(\.isServing) }

    /// The queue a request for `worker` waits in when it is full: one for the whole pool when
    /// any worker will do; one per worker when each key belongs to one worker.
    private func lane(of worker: WorkerSession) -> String {
        switch placement {
        case .leastLoaded: ""
        case .byCacheKey: worker.id
        }
    }

    /// Answers `request` outside any trip: its budget is its own deadline, and it takes the
    /// turns of client 0.
    func perform(_ request: Request) async -> ProviderOutcome {
        await perform(request, on: nil)
    }

    /// Answers `request` on behalf of `trip` (within its budget, taking its client's turns).
    func perform(_ request: Request, on trip: Trip?) async -> ProviderOutcome {
        await perform(request, on: trip, excluding: [])
    }

    /// Answers `request` on behalf of `trip` (within its budget, taking its client's turns),
    /// never sending it to a worker of `lost` (ids of workers lost while they had it).
    func perform(_ request: Request, on trip: Trip?, excluding lost: [String]) async -> ProviderOutcome {
        await forward(request, on: trip, lost: lost)
    }

    /// What ``send(_:budget:excluding:reply:)`` did.
    enum LoopSend {
        /// The request went out to this worker as this id; its reply comes to the callback.
        case sent(WorkerSession, MessageID)
        /// It went to this worker, which replied at once (the callback is not called).
        case replied(WorkerSession, WorkerSession.Reply)
        /// No worker has room for it now, or none is left: ask with ``perform(_:on:excluding:)``.
        case notNow
    }

    /// Sends `request` from the loop, without a task, when the worker chosen for it (not one
    /// of `lost`) has room now, with what is left of `budget` as its deadline: the worker's
    /// reply goes to `reply` on the loop, never before this returns (see
    /// ``WorkerSession/send(_:host:reply:)``). A request that would wait for a slot is not
    /// sent (``LoopSend/notNow``).
    func send(
        _ request: Request, budget: TripBudget, excluding lost: [String], reply: @escaping @CoordinatorActor (WorkerSession, WorkerSession.Reply) -> Void
    ) -> LoopSend {
        let host = Self.upstreamHost(of: request)
        guard case .reserved(let worker) = reserveReady(for: request, host: host, excluding: lost) else { return .notNow }
        var request = request
        if let end = budget.end { request.deadline = max(.zero, end - clock.now) }
        switch worker.send(request, host: host, reply: { reply(worker, $0) }) {
        case .waiting(let id): return .sent(worker, id)
        case .replied(let answer): return .replied(worker, answer)
        }
    }

    private func forward(_ request: Request, on trip: Trip?, lost: [String]) async -> ProviderOutcome {
        let budget = trip?.budget ?? TripBudget(end: request.deadline.map { [clock] in clock.now + $0 })
        let host = Self.upstreamHost(of: request)
        var request = request
        var lost = lost
        while true {
            if Task.isCancelled { return .failure(.cancelled) }
            let reserved: WorkerSession?
            switch reserveReady(for: request, host: host, excluding: lost) {
            case .reserved(let worker): reserved = worker
            case .noWorker: reserved = nil
            case .full: reserved = await acquire(for: request, host: host, excluding: lost, client: trip?.client ?? 0)
            }
            guard let worker = reserved else {
                if Task.isCancelled { return .failure(.cancelled) }
                if lost.isEmpty {
                    return .failure(ProviderFailure(code: .unavailable, message: "no \(kind) worker is connected"))
                }
                return .failure(ProviderFailure(
                    code: .workerLost, message: "every \(kind) worker tried was lost mid-request (\(lost.joined(separator: ", ")))"))
            }
            let end = budget.end
            if let end { request.deadline = max(.zero, end - clock.now) }
            switch await worker.forward(request, host: host) {
            case .answered(.failure(let failure))
            where budget.outgrew(end) && failure.code.isOutOfTime && request.isIdempotent:
                // It ran out of the budget it was sent with, but a waiter with more time joined
                // since: asked again with the budget that waiter brought.
                continue
            case .answered(let outcome):
                return outcome
            case .lost(let reason) where !request.isIdempotent:
                // The request may have taken effect before the worker was lost: not sent again.
                return .failure(ProviderFailure(
                    code: .workerLost, message: "\(reason); a \(request.method) request is not retried"))
            case .lost:
                lost.append(worker.id)
            }
        }
    }

    /// The `host:port` of a request's upstream URL, lowercased; `""` for a request with none.
    nonisolated static func upstreamHost(of request: Request) -> String {
        guard var upstream = request.route.upstream else { return "" }
        return upstream.withUTF8 { bytes in
            var start = 0
            while start + 3 <= bytes.count,
                !(bytes[start] == UInt8(ascii: ":") && bytes[start + 1] == UInt8(ascii: "/")
                    && bytes[start + 2] == UInt8(ascii: "/"))
            {
                start += 1
            }
            guard start + 3 <= bytes.count else { return "" }
            start += 3
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?"),
                bytes[end] != UInt8(ascii: "#")
            {
                end += 1
            }
            // Host names are ASCII (IDNs travel as punycode).
            return String(unsafeUninitializedCapacity: end - start) { host in
                for offset in 0..<(end - start) { host[offset] = bytes[start + offset].asciiLowercased }
                return end - start
            }
        }
    }

    /// What ``reserveReady(for:host:excluding:)`` found.
    private enum Reservation {
        /// A slot of this worker is reserved.
        case reserved(WorkerSession)
        /// No worker is left to try.
        case noWorker
        /// The chosen worker is full (in this lane).
        case full(WorkerSession)
    }

    /// Reserves a slot for `request` (for upstream `host`) of the worker chosen for it, when
    /// that worker has room now.
    private func reserveReady(for request: Request, host: String, excluding excluded: [String]) -> Reservation {
        guard let worker = choose(for: request, host: host, excluding: excluded) else { return .noWorker }
        guard worker.hasRoom(forHost: host) else { return .full(worker) }
        worker.reserve(host: host)
        return .reserved(worker)
    }

    /// A worker with a slot reserved for `request` (for upstream `host`), waiting in turn while
    /// the chosen worker is full; nil when no worker is left to try, or the task was cancelled.
    private func acquire(
        for request: Request, host: String, excluding excluded: [String], client: Int
    ) async -> WorkerSession? {
        while true {
            let worker: WorkerSession
            switch reserveReady(for: request, host: host, excluding: excluded) {
            case .reserved(let reserved): return reserved
            case .noWorker: return nil
            case .full(let full): worker = full
            }
            switch await waitForSlot(
                for: request, in: LaneKey(lane: lane(of: worker), host: host), excluding: excluded, client: client)
            {
            case .worker(let granted): return granted
            case .retry: continue
            case .cancelled: return nil
            }
        }
    }

    /// Waits in `lane` for a slot for `request`, which ``grantSlots(of:)`` hands out in turn.
    private func waitForSlot(
        for request: Request, in lane: LaneKey, excluding excluded: [String], client: Int
    ) async -> Grant {
        let ticket = state.nextTicket
        state.nextTicket += 1
        state.queued += 1
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if Task.isCancelled { return continuation.resume(returning: .cancelled) }
                // Chosen again where the wait begins: a slot freed, or a worker lost, meanwhile
                // found nobody waiting.
                switch reserveReady(for: request, host: lane.host, excluding: excluded) {
                case .reserved(let worker): return continuation.resume(returning: .worker(worker))
                case .noWorker: return continuation.resume(returning: .retry)
                case .full(let full) where self.lane(of: full) != lane.lane: return continuation.resume(returning: .retry)
                case .full: break
                }
                state.lanes[lane, default: FairQueue()].append(
                    Waiting(continuation: continuation, excluded: excluded), client: client, ticket: ticket)
            }
        } onCancel: {
            loop.execute { [self] in CoordinatorActor.assumeIsolated { stopWaiting(in: lane, ticket: ticket, client: client) } }
        }
    }

    /// Answers the request waiting under `ticket` for a slot in `lane` `cancelled`.
    private func stopWaiting(in lane: LaneKey, ticket: Int, client: Int) {
        let left = state.lanes[lane]?.remove(ticket: ticket, client: client)
        if state.lanes[lane]?.isEmpty ?? false { state.lanes[lane] = nil }
        left?.continuation.resume(returning: .cancelled)
    }

    /// Hands the free slots of `worker` to the requests waiting in its lane, the hosts taking
    /// turns one request at a time, and clients taking turns within a host.
    private func grantSlots(of worker: WorkerSession) {
        let lane = lane(of: worker)
        // Read in place: a copy of the table kept past this line would make the grants below
        // copy the whole table.
        var keys = state.lanes.filter { $0.key.lane == lane && !$0.value.isEmpty }.map(\.key).sorted { $0.host < $1.host }
        guard !keys.isEmpty else { return }
        state.hostTurn += 1
        let turn = state.hostTurn % keys.count
        keys = Array(keys[turn...] + keys[..<turn])
        var granted = true
        while granted, worker.hasRoom {
            granted = false
            for key in keys where worker.hasRoom(forHost: key.host) {
                guard let next = state.lanes[key]?.popNext() else { continue }
                granted = true
                if next.excluded.contains(worker.id) {
                    // This request already lost this worker once: it chooses among the others.
                    next.continuation.resume(returning: .retry)
                    continue
                }
                worker.reserve(host: key.host)
                next.continuation.resume(returning: .worker(worker))
            }
        }
        for key in keys where state.lanes[key]?.isEmpty ?? false { state.lanes[key] = nil }
    }

    /// Sends every waiting request of the pool to choose a worker again.
    func retryAllWaiting() {
        var waiting: [Waiting] = []
        for key in Array(state.lanes.keys) { waiting += state.lanes[key]?.removeAll() ?? [] }
        state.lanes.removeAll()
        for request in waiting { request.continuation.resume(returning: .retry) }
    }

    /// The worker `request` goes to, not among `excluded` (ids of workers lost during this
    /// request), full or not; nil when none is left: the owner of its cache key (see
    /// ``Placement``), else among those with room (else among all) the one with the fewest
    /// requests in flight.
    private func choose(for request: Request, host: String, excluding excluded: [String]) -> WorkerSession? {
        if placement == .byCacheKey, let key = request.route.cacheKey { return owner(of: key, excluding: excluded) }
        let workers = state.workers
        guard !workers.isEmpty else { return nil }
        let cursor = state.cursor
        var best: WorkerSession?
        for offset in 0..<workers.count {
            let worker = workers[(cursor + offset) % workers.count]
            guard worker.isServing, !excluded.contains(worker.id) else { continue }
            if let current = best, Self.preference(current, host) >= Self.preference(worker, host) { continue }
            best = worker
        }
        state.cursor = (cursor + 1) % workers.count
        return best
    }

    /// The worker that owns `key`, among the serving ones not `excluded`.
    func owner(of key: String, excluding excluded: [String] = []) -> WorkerSession? {
        let candidates = state.workers.lazy.filter { $0.isServing && !excluded.contains($0.id) }
        return Rendezvous.owner(of: key, among: candidates, name: \.shardName)
    }

    /// How much a worker is preferred for a request to `host`: one with room over a full one,
    /// then the least loaded.
    private static func preference(_ worker: WorkerSession, _ host: String) -> (Int, Int) {
        (worker.hasRoom(forHost: host) ? 1 : 0, -worker.load)
    }
}
