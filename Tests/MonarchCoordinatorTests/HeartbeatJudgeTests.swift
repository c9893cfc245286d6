@testable import MonarchCoordinator
import Testing

@Suite struct HeartbeatJudgeTests {
    let start = ContinuousClock.now

    @Test("Two beats and a little more of silence make a suspect; less does not")
    func silence() {
        let judge = HeartbeatJudge(interval: .seconds(1))
        #expect(judge.allowedSilence == .milliseconds(2500))
        #expect(!judge.suspects(lastHeard: start, now: start + .milliseconds(2500)))
        #expect(judge.suspects(lastHeard: start, now: start + .milliseconds(2501)))
        let short = HeartbeatJudge(interval: .milliseconds(200))
        #expect(short.allowedSilence == .milliseconds(500))
    }

    @Test("A beat more than half an interval late judges nobody, and is counted")
    func lateBeat() {
        var judge = HeartbeatJudge(interval: .seconds(1))
        #expect(judge.beat(at: start) == .onTime)
        #expect(judge.beat(at: start + .milliseconds(1400)) == .onTime)
        // The loop was held up for three seconds: the silence it would see is the coordinator's.
        #expect(judge.beat(at: start + .milliseconds(4488)) == .late(by: .milliseconds(2088)))
        #expect(judge.lateBeats == 1)
        // The next beat on time judges again.
        #expect(judge.beat(at: start + .milliseconds(5488)) == .onTime)
        #expect(judge.lateBeats == 1)
    }
}
