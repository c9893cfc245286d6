import Monarch
@testable import MonarchCoordinator
import Testing

@Suite("Answers held for the reads that arrive before their write-back is stored")
struct HeldAnswersTests {
    func entry(
        _ flight: Int, until: ContinuousClock.Instant, notes: TripNotes = TripNotes(), invalidated: Bool = false
    ) -> HeldAnswers.Entry {
        HeldAnswers.Entry(
            flight: flight, response: Response(), prepared: nil, notes: notes, until: until, isInvalidated: { invalidated })
    }

    @Test("An answer is handed out until its time is up on the table's clock, and not after")
    func heldUntil() {
        let clock = TestClock()
        var held = HeldAnswers(capacity: 4, clock: clock.clock)
        held.hold(entry(1, until: clock.now + .seconds(5)), under: "k")
        clock.advance(by: .milliseconds(4_999))
        let answer = held.answer(for: "k")
        #expect(answer?.flight == 1)
        #expect(answer?.prepared != nil, "prepared on first use")
        clock.advance(by: .milliseconds(1))
        #expect(held.answer(for: "k") == nil)
        #expect(held.count == 0)
        #expect(held.handedOut == 1)
    }

    @Test("Answers whose time is up are dropped as others are held; past the capacity the oldest goes")
    func dropping() {
        let clock = TestClock()
        var held = HeldAnswers(capacity: 2, clock: clock.clock)
        held.hold(entry(1, until: clock.now + .seconds(1)), under: "a")
        held.hold(entry(2, until: clock.now + .seconds(10)), under: "b")
        clock.advance(by: .seconds(1))
        held.hold(entry(3, until: clock.now + .seconds(10)), under: "c")
        #expect(held.count == 2, "a's time was up: dropped as c was held")
        held.hold(entry(4, until: clock.now + .seconds(10)), under: "d")
        #expect(held.count == 2)
        #expect(held.answer(for: "b") == nil, "the oldest of those still usable made room")
        #expect(held.answer(for: "c")?.flight == 3 && held.answer(for: "d")?.flight == 4)
    }

    @Test("An answer an invalidation covers, or whose write-back is over, is not handed out, whatever the time")
    func invalidatedOrStored() {
        let clock = TestClock()
        var held = HeldAnswers(capacity: 4, clock: clock.clock)
        held.hold(entry(1, until: clock.now + .seconds(5), invalidated: true), under: "invalidated")
        let stored = TripNotes()
        held.hold(entry(2, until: clock.now + .seconds(5), notes: stored), under: "stored")
        #expect(held.answer(for: "stored")?.flight == 2)
        stored.writeBackBegan()
        stored.writeBackEnded()
        #expect(held.answer(for: "invalidated") == nil)
        #expect(held.answer(for: "stored") == nil)
    }
}
