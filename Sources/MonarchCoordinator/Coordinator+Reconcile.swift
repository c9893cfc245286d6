import Monarch
import MonarchWire

// The scale run: one per pool, bringing it to the size last asked for, a step at a time.
extension Coordinator {
    /// Brings the local pool of `kind` to the size its supervisor wants now, however often that
    /// changes meanwhile, then answers the callers of its run (see ``scale(_:)``).
    ///
    /// Every 20 ms it looks at the pool and takes the next ``ScalePlan`` step: it keeps leaving
    /// workers a larger size wants back, starts workers no faster than admission takes them
    /// (at most ``ScalePlan/startBound(workerStarts:handshakes:)`` started and not yet
    /// registered across pools, within ``Configuration/Limits/workers``), chooses workers to go
    /// only as ``ScalePlan`` allows, takes them out of rotation, and stops each once it has
    /// nothing in flight. Loop thread.
    func reconcile(_ kind: String, supervisor: Supervisor) async {
        loop.preconditionInEventLoop()
        scalingKinds.insert(kind)
        defer { scalingKinds.remove(kind) }
        // A worker chosen to go while it was starting registers draining.
        pools[kind]?.setDrainsOnArrival { [supervisor] name in supervisor.assumeIsolated { $0.isLeaving(name) } }
        let bound = ScalePlan.startBound(workerStarts: limits.workerStarts, handshakes: limits.handshakes)
        // Progress is judged on ``clock``; the pauses between looks are real.
        var lastChange = clock.now
        var lastLook: [ScalePlan.Worker] = []
        var lastTarget = -1
        while true {
            guard !draining, !isStopping(supervisor) else {
                return end(kind, supervisor, .failed(.shuttingDown, "the coordinator is shutting down"))
            }
            let (target, failure, workers) = look(at: kind, supervisor)
            if let failure {
                return end(kind, supervisor, .failed(.unavailable, "the \(kind) pool failed: \(failure) (\(target) workers stay wanted)"))
            }
            if ScalePlan.isDone(target, workers: workers) {
                let local = Set(workers.map(\.name))
                let remote = pools[kind]?.connected.filter { !local.contains($0.id) }.count ?? 0
                return end(kind, supervisor, .finished(target: target, final: workers.map { ($0.name, $0.ordinal) }, remote: remote))
            }
            let plan = ScalePlan.next(
                toward: target, workers: workers,
                startRoom: ScalePlan.startRoom(
                    bound: bound, starting: startingLocalWorkers(supervisor), workerRoom: limits.workers - workerConnections))
            do {
                try apply(plan, to: kind, supervisor)
            } catch {
                return end(kind, supervisor, .failed(.unavailable, "\(error.message) (\(target) workers stay wanted)"))
            }
            stopDrainedWorkers(of: kind, supervisor)
            if target != lastTarget || workers != lastLook || !plan.isEmpty {
                (lastTarget, lastLook, lastChange) = (target, workers, clock.now)
            } else if clock.now - lastChange > scaleTimeout {
                let waiting = workers.filter { $0.leaving || !$0.registered }.map(\.name)
                return end(kind, supervisor, .failed(
                    .unavailable,
                    "no progress within \(scaleTimeout): still waiting for \(waiting.joined(separator: ", ")) (\(target) workers stay wanted)"))
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Whether `supervisor` is stopping every worker.
    private func isStopping(_ supervisor: Supervisor) -> Bool { supervisor.assumeIsolated { $0.stopping } }

    /// The size wanted for `kind`, why its pool failed (if it did), and its local workers.
    private func look(at kind: String, _ supervisor: Supervisor) -> (Int, String?, [ScalePlan.Worker]) {
        // A kind no domain uses has no pool here: its workers count once connected.
        var serving: Set<String> = pools[kind] == nil ? connectedWorkerNames[kind] ?? [] : []
        for worker in pools[kind]?.workers ?? [] where worker.lostReason == nil && !worker.isUnresponsive {
            serving.insert(worker.id)
        }
        let state = supervisor.assumeIsolated { $0.poolState(kind) }
        let workers = (state?.slots ?? []).map { slot in
            ScalePlan.Worker(
                name: slot.name, ordinal: slot.ordinal, registered: serving.contains(slot.name), leaving: slot.leaving,
                stopRequested: slot.stopRequested)
        }
        return (state?.desired ?? 0, state?.failure, workers)
    }

    /// Local workers of every pool running and not registered (starting, in their handshake),
    /// whether or not a domain uses their kind.
    private func startingLocalWorkers(_ supervisor: Supervisor) -> Int {
        supervisor.assumeIsolated { $0.poolStates }.reduce(0) { total, entry in
            let registered = connectedWorkerNames[entry.kind] ?? []
            return total + entry.state.slots.filter { $0.pid != nil && !registered.contains($0.name) }.count
        }
    }

    /// Takes the step `plan` for the pool of `kind`.
    ///
    /// - Throws: ``ClusterError`` when a worker cannot be started.
    private func apply(_ plan: ScalePlan, to kind: String, _ supervisor: Supervisor) throws(ClusterError) {
        let pool = pools[kind]
        for name in supervisor.assumeIsolated({ $0.keep(plan.keep) }) {
            if let worker = pool?.workers.first(where: { $0.id == name }) { pool?.returnToRotation(worker) }
            logger.info("\(name) stays: a later scale wants it")
        }
        if plan.start > 0 {
            let started = try supervisor.assumeIsolated { supervisor in
                Result { () throws(ClusterError) in try supervisor.grow(kind, by: plan.start) }
            }.get()
            logger.debug("started \(started.joined(separator: ", "))")
        }
        guard !plan.leave.isEmpty else { return }
        supervisor.assumeIsolated { $0.leave(plan.leave) }
        // Leaving workers take no new requests from now, and finish what they have.
        for name in plan.leave {
            guard let worker = pool?.workers.first(where: { $0.id == name }) else { continue }
            worker.isDraining = true
            pool?.takeOutOfRotation(worker)
        }
    }

    /// Stops each leaving worker of `kind` that has nothing in flight (or never registered).
    private func stopDrainedWorkers(of kind: String, _ supervisor: Supervisor) {
        let pool = pools[kind]
        for slot in supervisor.assumeIsolated({ $0.poolState(kind)?.slots ?? [] }) where slot.leaving && !slot.stopRequested {
            let worker = pool?.workers.first { $0.id == slot.name && $0.lostReason == nil }
            if let worker, !worker.isDraining {
                worker.isDraining = true
                pool?.takeOutOfRotation(worker)
            }
            if worker?.isIdle ?? true { supervisor.assumeIsolated { $0.stop(slot.name) } }
        }
    }

    /// Ends the run of `kind`: stops the leaving workers it leaves behind — each finishes what
    /// it has (SIGTERM), within the time a request may take — then forgets the run (a later
    /// scale starts a new one) and answers its callers as `ending` says.
    private func end(_ kind: String, _ supervisor: Supervisor, _ ending: ScaleRun.Ending) {
        let grace = max(limits.timeout, .seconds(10))
        supervisor.assumeIsolated { supervisor in
            for slot in supervisor.poolState(kind)?.slots ?? [] where slot.leaving && !slot.stopRequested {
                supervisor.stop(slot.name, grace: grace)
            }
            supervisor.endRun(of: kind, ending)
        }
    }
}
