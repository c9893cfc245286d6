import Monarch
import MonarchWire

// The scale run: one per pool, bringing it to the size last asked for, a step at a time. It
// runs on CoordinatorActor, as the supervisor and the coordinator do, so what it reads and
// changes of either (the coordinator's pools and counts among them) is checked by the compiler.
extension Supervisor {
    /// Makes `message.count` local workers of `message.kind` wanted, and joins the pool's scale
    /// run (starting it when there is none) until it answers: ``Coordinator/scale(_:)`` says
    /// what. `invalidRequest` when the pool is not one of this supervisor's or the count is
    /// above what its configuration allows; `unavailable` before the cluster's start has
    /// launched its first workers (``startUp(atOnce:ready:failed:exitedEarly:)``), whose
    /// count would otherwise be changed under it.
    func scale(_ message: ScaleMessage, for coordinator: Coordinator) async -> WireMessage {
        func failure(_ code: ChainError.Code, _ text: String) -> WireMessage {
            .failure(FailureMessage(id: message.id, error: ChainError(code, text).detail))
        }
        guard startup != nil || started else {
            return failure(.unavailable, "the cluster is still starting its workers; scale once it is ready")
        }
        let kind = message.kind
        // The size wanted before, and the local workers registered and staying now.
        let registered = Set(coordinator.pools[kind]?.connected.filter(\.isServing).map(\.id) ?? [])
        let previous: Int
        do {
            previous = try setDesired(kind, to: message.count)
        } catch {
            return failure(.invalidRequest, error.message)
        }
        let staying = poolState(kind)?.slots.filter { !$0.leaving }.map(\.name) ?? []
        let before = Set(staying).intersection(registered)
        return await withCheckedContinuation { continuation in
            let caller = ScaleRun.Caller(
                id: message.id, requested: message.count, previous: previous, before: before, continuation: continuation)
            let (joined, startsRun) = joinRun(caller, of: kind)
            guard joined else {
                // The pool was here a moment ago (``setDesired(_:to:)``), in this same job.
                return continuation.resume(returning: failure(.invalidRequest, "no \(kind) pool to scale"))
            }
            coordinator.logger.info(
                "scaling \(kind): \(previous) → \(message.count)\(startsRun ? "" : " (replacing the size the run under way was going to)")")
            guard startsRun else { return }
            // Not cancelled with the call: a scale half done (workers draining, not yet
            // stopped) is finished, and its waits are not cut short into a busy loop.
            Task { await reconcile(kind, for: coordinator) }
        }
    }

    /// Brings the local pool of `kind` to the size wanted now, however often that changes
    /// meanwhile, then answers the callers of its run (see ``Coordinator/scale(_:)``).
    ///
    /// Every 20 ms it looks at the pool and takes the next ``ScalePlan`` step: it keeps leaving
    /// workers a larger size wants back, starts workers no faster than admission takes them
    /// (at most ``ScalePlan/startBound(workerStarts:handshakes:)`` started and not yet
    /// registered across pools, within ``Configuration/Limits/workers``), chooses workers to go
    /// only as ``ScalePlan`` allows, takes them out of rotation, and stops each once it has
    /// nothing in flight.
    func reconcile(_ kind: String, for coordinator: Coordinator) async {
        coordinator.scalingKinds.insert(kind)
        defer { coordinator.scalingKinds.remove(kind) }
        // A worker chosen to go while it was starting registers draining.
        coordinator.pools[kind]?.setDrainsOnArrival { [unowned self] name in isLeaving(name) }
        let limits = coordinator.limits
        let bound = ScalePlan.startBound(workerStarts: limits.workerStarts, handshakes: limits.handshakes)
        // Progress is judged on the coordinator's clock; the pauses between looks are real.
        let clock = coordinator.clock
        var lastChange = clock.now
        var lastLook: [ScalePlan.Worker] = []
        var lastTarget = -1
        while true {
            guard !coordinator.draining, !stopping else {
                return endScaleRun(of: kind, .failed(.shuttingDown, "the coordinator is shutting down"), for: coordinator)
            }
            let (target, failure, workers) = look(at: kind, for: coordinator)
            if let failure {
                return endScaleRun(
                    of: kind, .failed(.unavailable, "the \(kind) pool failed: \(failure) (\(target) workers stay wanted)"),
                    for: coordinator)
            }
            if ScalePlan.isDone(target, workers: workers) {
                let local = Set(workers.map(\.name))
                let remote = coordinator.pools[kind]?.connected.filter { !local.contains($0.id) }.count ?? 0
                return endScaleRun(
                    of: kind, .finished(target: target, final: workers.map { ($0.name, $0.ordinal) }, remote: remote),
                    for: coordinator)
            }
            let plan = ScalePlan.next(
                toward: target, workers: workers,
                startRoom: ScalePlan.startRoom(
                    bound: bound, starting: startingLocalWorkers(for: coordinator),
                    workerRoom: limits.workers - coordinator.workerConnections))
            do {
                try apply(plan, to: kind, for: coordinator)
            } catch {
                return endScaleRun(
                    of: kind, .failed(.unavailable, "\(error.message) (\(target) workers stay wanted)"), for: coordinator)
            }
            stopDrainedWorkers(of: kind, for: coordinator)
            if target != lastTarget || workers != lastLook || !plan.isEmpty {
                (lastTarget, lastLook, lastChange) = (target, workers, clock.now)
            } else if clock.now - lastChange > coordinator.scaleTimeout {
                let waiting = workers.filter { $0.leaving || !$0.registered }.map(\.name)
                return endScaleRun(
                    of: kind,
                    .failed(
                        .unavailable,
                        "no progress within \(coordinator.scaleTimeout): still waiting for \(waiting.joined(separator: ", ")) "
                            + "(\(target) workers stay wanted)"),
                    for: coordinator)
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The size wanted for `kind`, why its pool failed (if it did), and its local workers.
    private func look(at kind: String, for coordinator: Coordinator) -> (Int, String?, [ScalePlan.Worker]) {
        let pool = coordinator.pools[kind]
        // A kind no domain uses has no pool here: its workers count once connected.
        var serving: Set<String> = pool == nil ? coordinator.connectedWorkerNames[kind] ?? [] : []
        for worker in pool?.workers ?? [] where worker.lostReason == nil && !worker.isUnresponsive {
            serving.insert(worker.id)
        }
        let state = poolState(kind)
        let workers = (state?.slots ?? []).map { slot in
            ScalePlan.Worker(
                name: slot.name, ordinal: slot.ordinal, registered: serving.contains(slot.name), leaving: slot.leaving,
                stopRequested: slot.stopRequested)
        }
        return (state?.desired ?? 0, state?.failure, workers)
    }

    /// Local workers of every pool running and not registered (starting, in their handshake),
    /// whether or not a domain uses their kind.
    private func startingLocalWorkers(for coordinator: Coordinator) -> Int {
        poolStates.reduce(0) { total, entry in
            let registered = coordinator.connectedWorkerNames[entry.kind] ?? []
            return total + entry.state.slots.filter { $0.pid != nil && !registered.contains($0.name) }.count
        }
    }

    /// Takes the step `plan` for the pool of `kind`.
    ///
    /// - Throws: ``ClusterError`` when a worker cannot be started.
    private func apply(_ plan: ScalePlan, to kind: String, for coordinator: Coordinator) throws(ClusterError) {
        let pool = coordinator.pools[kind]
        for name in keep(plan.keep) {
            if let worker = pool?.workers.first(where: { $0.id == name }) { pool?.returnToRotation(worker) }
            coordinator.logger.info("\(name) stays: a later scale wants it")
        }
        if plan.start > 0 {
            let started = try grow(kind, by: plan.start)
            coordinator.logger.debug("started \(started.joined(separator: ", "))")
        }
        guard !plan.leave.isEmpty else { return }
        leave(plan.leave)
        // Leaving workers take no new requests from now, and finish what they have.
        for name in plan.leave {
            guard let worker = pool?.workers.first(where: { $0.id == name }) else { continue }
            worker.isDraining = true
            pool?.takeOutOfRotation(worker)
        }
    }

    /// Stops each leaving worker of `kind` that has nothing in flight (or never registered).
    private func stopDrainedWorkers(of kind: String, for coordinator: Coordinator) {
        let pool = coordinator.pools[kind]
        for slot in poolState(kind)?.slots ?? [] where slot.leaving && !slot.stopRequested {
            let worker = pool?.workers.first { $0.id == slot.name && $0.lostReason == nil }
            if let worker, !worker.isDraining {
                worker.isDraining = true
                pool?.takeOutOfRotation(worker)
            }
            if worker?.isIdle ?? true { stop(slot.name) }
        }
    }

    /// Ends the run of `kind`: stops the leaving workers it leaves behind — each finishes what
    /// it has (SIGTERM), within the time a request may take — then forgets the run (a later
    /// scale starts a new one) and answers its callers as `ending` says.
    private func endScaleRun(of kind: String, _ ending: ScaleRun.Ending, for coordinator: Coordinator) {
        let grace = max(coordinator.limits.timeout, .seconds(10))
        for slot in poolState(kind)?.slots ?? [] where slot.leaving && !slot.stopRequested {
            stop(slot.name, grace: grace)
        }
        endRun(of: kind, ending)
    }
}
