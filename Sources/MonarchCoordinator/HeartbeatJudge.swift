/// Decides, beat by beat, which workers have been silent too long — counting only time in
/// which the coordinator could have heard them.
///
/// A worker's silence is the time since the coordinator last read a frame from it. When the
/// coordinator's own loop is held up (saturated by clients, a long callback), frames wait
/// unread in the worker's socket and every worker looks silent at once; the heartbeat timer
/// then also fires late. So:
/// - a beat that comes more than half an interval late judges nobody: the loop was busy, the
///   silence it would measure is the coordinator's own (``Beat/late(by:)``);
/// - a worker found silent on an on-time beat is only a suspect: it is judged again once the
///   loop has read what waits in the sockets (``suspects(lastHeard:now:)`` again, a pass of
///   the loop later), so a frame that was on its way clears it.
/// It reads no clock: the coordinator hands it instants of its own (``Coordinator/clock``).
/// Loop thread only (a value type the coordinator keeps in its state).
struct HeartbeatJudge {
    /// How often the coordinator beats (`limits.heartbeat`).
    let interval: Duration
    /// The silence after which a worker is out of rotation: two beats, and a little more, so
    /// that a pong on its way at the second beat still counts.
    let allowedSilence: Duration
    /// The longest silence spared to a local worker that is busy — runnable and using CPU,
    /// only starved of it on a saturated machine: ten beats. Past it, it is judged like any other.
    var busySilence: Duration { interval * 10 }
    /// When the last beat ran, late or not.
    private(set) var lastBeat: ContinuousClock.Instant?
    /// Beats that ran late and so judged nobody.
    private(set) var lateBeats = 0

    /// What a beat may do.
    enum Beat: Equatable {
        /// On time: silent workers become suspects.
        case onTime
        /// Late by this much past its interval: nobody is judged.
        case late(by: Duration)
    }

    /// A judge for beats every `interval`.
    init(interval: Duration) {
        self.interval = interval
        allowedSilence = interval * 2 + .milliseconds(min(interval.wholeMilliseconds / 2, 500))
    }

    /// Records a beat at `now` and says whether it may judge.
    mutating func beat(at now: ContinuousClock.Instant) -> Beat {
        defer { lastBeat = now }
        guard let lastBeat else { return .onTime }
        let overdue = (now - lastBeat) - interval
        guard overdue > interval / 2 else { return .onTime }
        lateBeats += 1
        return .late(by: overdue)
    }

    /// Whether a worker last heard at `lastHeard` is silent enough at `now` to be a suspect.
    func suspects(lastHeard: ContinuousClock.Instant, now: ContinuousClock.Instant) -> Bool {
        now - lastHeard > allowedSilence
    }
}
