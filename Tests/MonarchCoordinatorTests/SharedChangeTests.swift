import MonarchConfig
@testable import MonarchCoordinator
import MonarchWire
import Testing

@Suite struct SharedChangeTests {
    @Test func theSameChangeIsNewOnceAndTheWindowStaysBounded() {
        var recent = RecentChanges(capacity: 3)
        let firstRound = ["a.1", "a.1", "b.1", "a.2", "b.1"].map { recent.insert($0) }
        #expect(firstRound == [true, false, true, true, false])
        #expect(recent.count == 3)
        // A fourth id pushes the oldest (a.1) out: it would be new again, and the table stays at 3.
        let secondRound = ["c.1", "c.1", "a.1"].map { recent.insert($0) }
        #expect(secondRound == [true, false, true])
        #expect(recent.count == 3)
    }

    @Test func aForwardedChangeIsBoundedAsAnInvalidationAndAnEntrysTags() {
        var limits = Configuration.Limits()
        limits.invalidateBytes = 8
        limits.tagsPerEntry = 2
        limits.tagBytes = 4
        func problem(_ change: SharedChangeMessage) -> String? { Coordinator.problem(with: change, under: limits) }

        #expect(problem(SharedChangeMessage(change: "a.1", event: .invalidated, target: .key("12345678"))) == nil)
        #expect(problem(SharedChangeMessage(change: "a.1", event: .invalidated, target: .prefix("123456789")))?
            .contains("limits.invalidateBytes") == true)
        #expect(problem(SharedChangeMessage(change: "a.1", event: .invalidated, target: .tag("123456789")))?
            .contains("limits.invalidateBytes") == true)
        #expect(problem(SharedChangeMessage(change: "a.1", event: .stored, target: .key("k"), tags: ["a", "b"])) == nil)
        #expect(problem(SharedChangeMessage(change: "a.1", event: .stored, target: .key("k"), tags: ["a", "b", "c"]))?
            .contains("limits.tagsPerEntry") == true)
        #expect(problem(SharedChangeMessage(change: "a.1", event: .stored, target: .key("k"), tags: ["abcde"]))?
            .contains("limits.tagBytes") == true)
    }
}
