/// The next step of a pool toward the number of workers wanted, worked out from how its local
/// workers are now. Pure values: the scale run (``Supervisor/reconcile(_:for:)``)
/// looks, plans, applies, and looks again.
///
/// It promises: the workers registered and staying never drop below the number wanted nor
/// below the number there are (so never below the smaller of the old and new sizes while a pool
/// changes): a registered worker is chosen to go only once as many others are registered and
/// staying as are wanted; workers still starting go first. Growing keeps first the workers chosen to
/// go that are not yet told to stop, then starts new ones, no more than `startRoom`.
struct ScalePlan: Sendable, Equatable {
    /// One local worker of the pool, as the run sees it.
    struct Worker: Sendable, Equatable {
        /// Its name (`bundle-2`).
        var name: String
        /// Its place in its pool, from 1.
        var ordinal: Int
        /// Whether it is registered and answering (not lost, not unresponsive).
        var registered: Bool
        /// Chosen to go.
        var leaving: Bool
        /// Told to stop: it can no longer be kept.
        var stopRequested: Bool

        /// Creates a worker's view.
        init(name: String, ordinal: Int, registered: Bool, leaving: Bool = false, stopRequested: Bool = false) {
            self.name = name
            self.ordinal = ordinal
            self.registered = registered
            self.leaving = leaving
            self.stopRequested = stopRequested
        }
    }

    /// Workers chosen to go, to keep after all.
    var keep: [String] = []
    /// New workers to start (or stopped ones to start again).
    var start = 0
    /// Workers to choose to go.
    var leave: [String] = []

    /// Whether the step changes nothing.
    var isEmpty: Bool { keep.isEmpty && start == 0 && leave.isEmpty }

    /// The step that brings `workers` toward `target` staying workers, starting at most
    /// `startRoom` (≥ 0) new ones.
    static func next(toward target: Int, workers: [Worker], startRoom: Int) -> ScalePlan {
        var plan = ScalePlan()
        let staying = workers.filter { !$0.leaving }
        if staying.count < target {
            var missing = target - staying.count
            // Registered ones first: they serve again at once.
            let keepable = workers.filter { $0.leaving && !$0.stopRequested }
                .sorted { ($0.registered ? 0 : 1, $0.ordinal) < ($1.registered ? 0 : 1, $1.ordinal) }
            plan.keep = keepable.prefix(missing).map(\.name)
            missing -= plan.keep.count
            plan.start = min(missing, max(startRoom, 0))
        } else if staying.count > target {
            let extra = staying.count - target
            // The highest places go first, those still starting before any registered one.
            let starting = staying.filter { !$0.registered }.sorted { $0.ordinal > $1.ordinal }
            plan.leave = starting.prefix(extra).map(\.name)
            if extra > plan.leave.count {
                // Every one still starting goes: what stays is registered, `target` of them.
                let registered = staying.filter(\.registered).sorted { $0.ordinal > $1.ordinal }
                plan.leave += registered.prefix(extra - plan.leave.count).map(\.name)
            }
        }
        return plan
    }

    /// Whether `workers` are what `target` asks for: that many staying, all registered, and none
    /// left that is going.
    static func isDone(_ target: Int, workers: [Worker]) -> Bool {
        workers.allSatisfy { !$0.leaving && $0.registered } && workers.count == target
    }

    /// How many more local workers may start now: at most `bound` not yet registered at once
    /// (`starting` are), and no more than `workerRoom` further worker connections allow.
    static func startRoom(bound: Int, starting: Int, workerRoom: Int) -> Int {
        max(0, min(bound - starting, workerRoom))
    }

    /// The bound on local workers started and not yet registered at once:
    /// `limits.workerStarts`, but at most half of `limits.handshakes`, and at least 1.
    static func startBound(workerStarts: Int, handshakes: Int) -> Int {
        max(1, min(workerStarts, handshakes / 2))
    }
}
