@testable import MonarchCoordinator
import Testing

@Suite struct HeartbeatJudgeTests {
    @Test("Two beats and a little more of silence make a suspect; less does not")
    func silence() {
        let clock = TestClock()
        let judge = HeartbeatJudge(interval: .seconds(1))
        #expect(judge.allowedSilence == .milliseconds(2500))
        let lastHeard = clock.now
        clock.advance(by: .milliseconds(2500))
        #expect(!judge.suspects(lastHeard: lastHeard, now: clock.now))
        clock.advance(by: .milliseconds(1))
        #expect(judge.suspects(lastHeard: lastHeard, now: clock.now))
        let short = HeartbeatJudge(interval: .milliseconds(200))
        #expect(short.allowedSilence == .milliseconds(500))
    }

    @Test("A beat more than half an interval late judges nobody, and is counted")
    func lateBeat() {
        let clock = TestClock()
        var judge = HeartbeatJudge(interval: .seconds(1))
        #expect(judge.beat(at: clock.now) == .onTime)
        clock.advance(by: .milliseconds(1400))
        #expect(judge.beat(at: clock.now) == .onTime)
        // The loop was held up for three seconds: the silence it would see is the coordinator's.
        clock.advance(by: .milliseconds(3088))
        #expect(judge.beat(at: clock.now) == .late(by: .milliseconds(2088)))
        #expect(judge.lateBeats == 1)
        // The next beat on time judges again.
        clock.advance(by: .seconds(1))
        #expect(judge.beat(at: clock.now) == .onTime)
        #expect(judge.lateBeats == 1)
    }
}
