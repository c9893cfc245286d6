import Logging
import Monarch
import MonarchLoop
import MonarchConfig
import MonarchWire
import Synchronization

// `scale`: local pools grow and shrink at runtime; a shrinking pool drains first.
extension Coordinator {
    /// How long a `scale` waits for new workers to register and leaving ones to drain and exit.
    var scaleTimeout: Duration { max(limits.timeout, .seconds(30)) }

    /// Makes `message.count` local workers of `message.kind` run: a `result` (``ScaleReport``)
    /// once the new ones have registered and the leaving ones have drained and exited, or a
    /// `failure`: `invalidRequest` when this coordinator starts no workers, the configuration
    /// has none of that kind or the count is above ``Configuration/Limits/workers`` (no more
    /// workers may connect), `shuttingDown` while it drains, `unavailable` when a new worker
    /// exited before registering or did not register in time (the others stay). The scale
    /// runs to its end even when the client that asked leaves. Loop thread.
    func scale(_ message: ScaleMessage) async -> WireMessage {
        loop.preconditionInEventLoop()
        func failure(_ code: ChainError.Code, _ text: String) -> WireMessage {
            .failure(FailureMessage(id: message.id, error: ChainError(code, text).detail))
        }
        guard message.count <= limits.workers else {
            return failure(
                .invalidRequest, "\(message.count) \(message.kind) workers asked for; at most \(limits.workers) workers connect (limits.workers)")
        }
        guard !draining else { return failure(.shuttingDown, "the coordinator is shutting down") }
        guard let supervisor else {
            return failure(
                .invalidRequest,
                "this coordinator starts no workers (it runs outside `monarch up`); start or stop \(message.kind) workers where they run")
        }
        // Not cancelled with the call: a scale half done (workers draining, not yet stopped)
        // is finished, and its waits are not cut short into a busy loop.
        return await Task(executorPreference: loop) { [self] in
            let exits = await ExitWatch.start(supervisor)
            let reply = await scale(message, with: supervisor, seeing: exits)
            await exits.end()
            return reply
        }.value
    }

    /// ``scale(_:)`` once `exits` watches the supervisor's workers.
    private func scale(_ message: ScaleMessage, with supervisor: Supervisor, seeing exits: ExitWatch) async -> WireMessage {
        func failure(_ code: ChainError.Code, _ text: String) -> WireMessage {
            .failure(FailureMessage(id: message.id, error: ChainError(code, text).detail))
        }
        let kind = message.kind
        let change: Supervisor.ScaleChange
        do {
            change = try await supervisor.scale(kind, to: message.count)
        } catch {
            return failure(.invalidRequest, error.message)
        }
        logger.info("scaling \(kind): \(change.previous) → \(message.count)")
        scalingKinds.insert(kind)
        defer { scalingKinds.remove(kind) }
        // Leaving workers take no new requests from now, and finish what they have.
        for name in change.leaving {
            guard let worker = pools[kind]?.workers.first(where: { $0.id == name }) else { continue }
            worker.isDraining = true
            pools[kind]?.takeOutOfRotation(worker)
        }
        let start = ContinuousClock.now
        var stopRequested: Set<String> = []
        // A scale that ends early still stops its leaving workers: each finishes what it has
        // (SIGTERM), within the time a request may take.
        func stopTheRest() async {
            for name in change.leaving where !stopRequested.contains(name) {
                await supervisor.stop(name, grace: max(limits.timeout, .seconds(10)))
            }
        }
        while true {
            let pool = pools[kind]
            let registered = Set(pool?.connected.map(\.id) ?? [])
            let exited = exits.exited
            if let failed = change.started.first(where: { exited.contains($0) && !registered.contains($0) }) {
                await stopTheRest()
                return failure(.unavailable, "\(failed) exited before it registered (its log says why); scaled to \(message.count) nonetheless")
            }
            for name in change.leaving where !stopRequested.contains(name) {
                let worker = pool?.workers.first { $0.id == name }
                if worker?.isIdle ?? true {
                    stopRequested.insert(name)
                    await supervisor.stop(name)
                }
            }
            let allRegistered = change.started.allSatisfy(registered.contains)
            let stillHere = await supervisor.present(change.leaving)
            if allRegistered && stillHere.isEmpty { break }
            if ContinuousClock.now - start > scaleTimeout {
                await stopTheRest()
                let missing = change.started.filter { !registered.contains($0) } + stillHere
                return failure(.unavailable, "not done within \(scaleTimeout): \(missing.joined(separator: ", ")) (scaled to \(message.count) nonetheless)")
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        let local = Set(await supervisor.poolState(kind)?.slots.map(\.name) ?? [])
        let remote = pools[kind]?.connected.filter { !local.contains($0.id) }.count ?? 0
        let report = ScaleReport(
            kind: kind, count: message.count, previous: change.previous, started: change.started,
            stopped: change.leaving, remote: remote)
        return .result(ResultMessage(id: message.id, report: report))
    }
}

/// The names of the workers that exit while a scale waits, until ``end()``.
private struct ExitWatch: Sendable {
    /// The names seen, filled by the supervisor's observer.
    private final class Names: Sendable {
        let seen = Mutex<Set<String>>([])
    }

    private let names: Names
    private let supervisor: Supervisor
    private let observer: Int

    /// Starts watching `supervisor`'s workers exit.
    static func start(_ supervisor: Supervisor) async -> ExitWatch {
        let names = Names()
        let observer = await supervisor.addExitObserver { name in names.seen.withLock { _ = $0.insert(name) } }
        return ExitWatch(names: names, supervisor: supervisor, observer: observer)
    }

    /// The workers that exited since the watch began.
    var exited: Set<String> { names.seen.withLock { $0 } }

    /// Stops watching.
    func end() async {
        await supervisor.removeExitObserver(observer)
    }
}
