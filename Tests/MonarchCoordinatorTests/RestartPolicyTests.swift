@testable import MonarchCoordinator
import Testing

@Suite struct RestartPolicyTests {
    let policy = RestartPolicy(intensity: 3, window: .seconds(60))

    @Test("The first few exits are replaced well under a second, spread by jitter")
    func quickRestarts() {
        for exits in 1...3 {
            for jitter in [0.0, 0.5, 0.999] {
                let delay = policy.delay(afterConsecutiveExits: exits, jitter: jitter)
                #expect(delay >= .milliseconds(100) && delay < .milliseconds(500), "\(exits) exits: \(delay)")
            }
        }
        #expect(policy.delay(afterConsecutiveExits: 1, jitter: 0) != policy.delay(afterConsecutiveExits: 1, jitter: 0.9))
    }

    @Test("A worker that keeps dying waits longer each time, up to the cap")
    func backOff() {
        let delays = (4...12).map { policy.delay(afterConsecutiveExits: $0, jitter: 0.999) }
        #expect(delays.first! > .milliseconds(500) && delays.first! <= .seconds(1))
        for (earlier, later) in zip(delays, delays.dropFirst()) { #expect(later >= earlier) }
        #expect(delays.last! <= .seconds(30) && delays.last! > .seconds(29))
        #expect(policy.delay(afterConsecutiveExits: 100, jitter: 0.5) <= .seconds(30))
    }

    @Test("More restarts than the intensity within the window fail the pool; older ones do not count")
    func intensity() {
        let clock = TestClock()
        var restarts: [ContinuousClock.Instant] = []
        // Two restarts long ago, then three within the last five seconds.
        for gap in [Duration.zero, .seconds(30), .seconds(60), .seconds(2), .seconds(2)] {
            clock.advance(by: gap)
            restarts.append(clock.now)
        }
        clock.advance(by: .seconds(1))
        #expect(!policy.isExceeded(by: restarts, now: clock.now), "the two old ones are out of the window")
        #expect(policy.isExceeded(by: restarts + [clock.now], now: clock.now), "a fourth within the window")
        // Once the window has passed over them, the three recent ones do not count either.
        clock.advance(by: .seconds(61))
        #expect(!policy.isExceeded(by: restarts + [clock.now], now: clock.now))
    }
}
