import Monarch
import MonarchConfig
@testable import MonarchCoordinator
import MonarchWire
import Testing

@Suite struct WatchRegistryTests {
    let a1 = WatchRef(client: 1, watch: 1)
    let a2 = WatchRef(client: 1, watch: 2)
    let b1 = WatchRef(client: 2, watch: 1)

    @Test func aClientHoldsAtMostItsShareAndAnIdOnce() throws {
        var registry = WatchRegistry(perClient: 2)
        try registry.add(a1, on: [.key("GET api users/1")])
        #expect(throws: WatchRegistry.Refusal.idInUse) { try registry.add(a1, on: [.tag("t")]) }
        try registry.add(a2, on: [.tag("t")])
        #expect(throws: WatchRegistry.Refusal.tooMany(limit: 2)) { try registry.add(WatchRef(client: 1, watch: 3), on: [.tag("t")]) }
        // Another client has a share of its own.
        try registry.add(b1, on: [.prefix("GET api ")])
        #expect(registry.count == 3)
        let v1 = registry.remove(a2)
        #expect(v1)
        let v2 = registry.remove(a2)
        #expect(!v2)
        try registry.add(WatchRef(client: 1, watch: 3), on: [.tag("t")])
        registry.removeAll(of: 1)
        #expect(registry.count == 1)
        #expect(registry.count(of: 1) == 0)
        #expect(registry.watches(storedUnder: "GET api users/1", tags: ["t"]) == [b1])
    }

    @Test func aStoreConcernsItsKeyItsPrefixesAndItsTags() throws {
        var registry = WatchRegistry(perClient: 8)
        try registry.add(a1, on: [.key("GET api users/1"), .key("HEAD api users/1")])
        try registry.add(a2, on: [.tag("users")])
        try registry.add(b1, on: [.prefix("GET api users/")])
        #expect(registry.watches(storedUnder: "GET api users/1", tags: []) == [a1, b1])
        #expect(registry.watches(storedUnder: "GET api users/2", tags: ["users"]) == [a2, b1])
        #expect(registry.watches(storedUnder: "GET api other", tags: ["else"]).isEmpty)
    }

    @Test func anInvalidationConcernsKeysPrefixesAndTagsAsDocumented() throws {
        var registry = WatchRegistry(perClient: 8)
        try registry.add(a1, on: [.key("GET api users/1")])
        try registry.add(a2, on: [.tag("users")])
        try registry.add(b1, on: [.prefix("GET api users/1")])
        #expect(registry.watches(invalidating: .key("GET api users/1"), removedKeys: nil) == [a1, b1])
        #expect(registry.watches(invalidating: .key("GET api users/2"), removedKeys: nil).isEmpty)
        // Prefixes: keys under it, and prefixes overlapping it either way.
        #expect(registry.watches(invalidating: .prefix("GET api "), removedKeys: nil) == [a1, b1])
        #expect(registry.watches(invalidating: .prefix("GET api users/10"), removedKeys: nil) == [b1])
        #expect(registry.watches(invalidating: .prefix("GET static "), removedKeys: nil).isEmpty)
        // Tags: the tag's watchers, and those of the keys dropped; all key and prefix watchers
        // when the keys are not known.
        #expect(registry.watches(invalidating: .tag("users"), removedKeys: []) == [a2])
        #expect(registry.watches(invalidating: .tag("other"), removedKeys: ["GET api users/1"]) == [a1, b1])
        #expect(registry.watches(invalidating: .tag("other"), removedKeys: nil) == [a1, b1])
    }
}

@Suite struct WatchOutboxTests {
    func event(_ watch: MessageID, _ key: String) -> ChangedMessage {
        ChangedMessage(watch: watch, event: .stored, key: key)
    }

    @Test func eventsPastTheLimitBecomeOneOverflowAfterTheQueuedOnes() {
        var outbox = WatchOutbox(limit: 2)
        let v3 = outbox.enqueue(event(1, "a"))
        #expect(v3)
        let v4 = outbox.enqueue(event(1, "b"))
        #expect(v4)
        let v5 = outbox.enqueue(event(1, "c"))
        #expect(!v5)
        let v6 = outbox.enqueue(event(1, "d"))
        #expect(!v6)
        #expect(outbox.count == 3)
        let v7 = outbox.next()
        #expect(v7?.key == "a")
        // Once a watch overflowed, what comes before the overflow went out is dropped too: the
        // overflow says "caught up from here".
        let v8 = outbox.enqueue(event(1, "e"))
        #expect(!v8)
        let v9 = outbox.next()
        #expect(v9?.key == "b")
        let v10 = outbox.next()
        #expect(v10 == ChangedMessage(watch: 1, event: .overflow, dropped: 3))
        let v11 = outbox.next()
        #expect(v11 == nil)
        #expect(outbox.isClear(1))
        let v12 = outbox.enqueue(event(1, "f"))
        #expect(v12)
    }

    @Test func watchesTakeTurnsAndAForgottenWatchLeavesNothing() {
        var outbox = WatchOutbox(limit: 4)
        for key in ["a", "b"] { outbox.enqueue(event(1, key)) }
        for key in ["x", "y"] { outbox.enqueue(event(2, key)) }
        var order: [String] = []
        while let next = outbox.next() { order.append(next.key ?? "") }
        #expect(order == ["a", "x", "b", "y"])
        outbox.enqueue(event(3, "z"))
        outbox.forget(3)
        let v13 = outbox.next()
        #expect(v13 == nil)
        #expect(outbox.count == 0)
    }
}
