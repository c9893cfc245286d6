import Logging
import MonarchLoop
import MonarchWire

// Heartbeats: every worker is pinged each `limits.heartbeat`; one that has sent nothing for
// two beats — time the coordinator could have heard it in — is taken out of rotation.
extension Coordinator {
    /// Pings every worker. On a beat that comes on time, the workers silent for two beats
    /// become suspects, judged again once the loop has read what waits in their sockets;
    /// a late beat (the coordinator's own loop was held up) judges nobody (see
    /// ``HeartbeatJudge``). The beat's time, and the confirmation's, are read on ``clock``.
    func checkHeartbeats() {
        let now = clock.now
        let beat = heartbeatJudge.beat(at: now)
        sampleLocalWorkerProgress()
        var suspects: [WorkerSession] = []
        for pool in pools.values {
            for worker in pool.workers where worker.lostReason == nil {
                if beat == .onTime, heartbeatJudge.suspects(lastHeard: worker.lastHeard, now: now) {
                    suspects.append(worker)
                } else {
                    worker.ping()
                }
            }
        }
        if case .late(let overdue) = beat {
            peerLog.log(
                .warning,
                "the heartbeat ran \(overdue.wholeMilliseconds) ms late (the coordinator was busy); no worker is judged on it",
                to: logger)
        }
        guard !suspects.isEmpty else { return }
        // Judged again a pass of the loop later: the frames waiting in their sockets are read
        // first, and any of them clears its worker.
        let confirmation = try? LoopTimer(on: loop)
        guard let confirmation else { return judge(suspects, now: now) }
        confirmation.start(afterMs: 1) { [unowned self, suspects] in
            confirmation.close()
            CoordinatorActor.assumeIsolated { judge(suspects, now: clock.now) }
        }
    }

    /// Takes each of `suspects` still silent at `now` out of rotation: its requests go to a
    /// sibling (idempotent ones; a POST fails with `workerLost`), and a local one is killed so
    /// its supervisor starts it again; a remote one is disconnected.
    private func judge(_ suspects: [WorkerSession], now: ContinuousClock.Instant) {
        for worker in suspects where worker.lostReason == nil {
            guard heartbeatJudge.suspects(lastHeard: worker.lastHeard, now: now) else {
                worker.ping()
                continue
            }
            let silence = now - worker.lastHeard
            if silence < heartbeatJudge.busySilence, isBusy(worker.id) {
                // Alive and working, only short of CPU: killing it would lose its work too.
                peerLog.log(
                    .warning,
                    "worker \(worker.id) has been silent for \(silence.wholeMilliseconds) ms but is busy (using CPU): spared "
                        + "until \(heartbeatJudge.busySilence.wholeMilliseconds) ms of silence",
                    to: logger)
                worker.ping()
                continue
            }
            worker.declareUnresponsive(
                "worker \(worker.id) is unresponsive: nothing heard for \(silence.wholeMilliseconds) ms "
                    + "(heartbeat \(limits.heartbeat.wholeMilliseconds) ms)")
            unresponsiveWorkers += 1
            pools[worker.kind]?.takeOutOfRotation(worker)
            // A local worker is killed (and restarted); a remote one is let go.
            if supervisor?.kill(worker.id) != true {
                worker.connection.close()
            }
        }
    }

    /// Reads each local worker's CPU progress (``ProcessProgress``), keeping the sample of the
    /// beat before; workers that left are forgotten.
    private func sampleLocalWorkerProgress() {
        guard let supervisor else { return }
        var samples: [String: (previous: ProcessProgress?, latest: ProcessProgress)] = [:]
        for pool in pools.values {
            for worker in pool.workers where worker.lostReason == nil {
                guard let pid = supervisor.pid(of: worker.id),
                    let progress = ProcessProgress.read(pid: pid)
                else { continue }
                samples[worker.id] = (state.workerProgress[worker.id]?.latest, progress)
            }
        }
        state.workerProgress = samples
    }

    /// Whether the local worker `id` used CPU between the last two beats and is neither
    /// stopped nor dead.
    private func isBusy(_ id: String) -> Bool {
        guard let sample = state.workerProgress[id], let previous = sample.previous else { return false }
        return sample.latest.isBusy(since: previous)
    }
}
