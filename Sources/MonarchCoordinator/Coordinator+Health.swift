import Logging
import MonarchWire

// Heartbeats: every worker is pinged each `limits.heartbeat`; one that has sent nothing for
// two beats is taken out of rotation at once.
extension Coordinator {
    /// Pings every worker, and takes out of rotation each one silent for two beats: its
    /// requests go to a sibling (idempotent ones; a POST fails with `workerLost`), and a local
    /// one is killed so its supervisor starts it again; a remote one is disconnected.
    func checkHeartbeats(now: ContinuousClock.Instant = .now) {
        let interval = limits.heartbeat
        // Two beats, and a little more, so a pong on its way at the second beat still counts.
        let allowed = interval * 2 + .milliseconds(min(interval.wholeMilliseconds / 2, 500))
        for pool in pools.values {
            for worker in pool.workers where worker.lostReason == nil {
                let silence = now - worker.lastHeard
                guard silence > allowed else {
                    worker.ping()
                    continue
                }
                worker.declareUnresponsive(
                    "worker \(worker.id) is unresponsive: nothing heard for \(silence.wholeMilliseconds) ms "
                        + "(heartbeat \(interval.wholeMilliseconds) ms)")
                unresponsiveWorkers += 1
                pool.takeOutOfRotation(worker)
                // A local worker is killed (and restarted); a remote one is let go.
                if supervisor?.assumeIsolated({ $0.kill(worker.id) }) != true {
                    worker.connection.close()
                }
            }
        }
    }
}
