@testable import MonarchCache
import MonarchWire
import Synchronization
import Testing

@Suite struct StoreChangeNoteTests {
    @Test(arguments: [
        StoreChangeNote(
            sender: "9f2c", sequence: 17, origin: "c0ffee", event: .stored, target: .key("GET api users/1"),
            tags: ["user-1", "users"]),
        StoreChangeNote(sender: "9f2c", sequence: 18, origin: "c0ffee", event: .invalidated, target: .key("GET api a\nb")),
        StoreChangeNote(sender: "9f2c", sequence: 19, origin: "", event: .invalidated, target: .prefix("GET api "), changedSomething: false),
        StoreChangeNote(sender: "41aa", sequence: 1, origin: "c0ffee", event: .invalidated, target: .tag("users")),
        // "\r\n" is one Character: lines are split on bytes.
        StoreChangeNote(
            sender: "41aa", sequence: 2, origin: "c0ffee", event: .stored, target: .key("\r\nGET api a\r"), tags: ["a\r", "\rb"]),
        StoreChangeNote(sender: "41aa", sequence: 3, origin: "c0ffee", event: .invalidated, target: .tag("t\r\n")),
    ])
    func aNoteSurvivesItsPayload(_ note: StoreChangeNote) throws {
        let payload = try #require(note.payload)
        #expect(StoreChangeNote(payload: payload) == note)
    }

    @Test("Tags a note cannot carry are left out: those holding a line break, and those past 1,024")
    func tagsANoteCannotCarryAreLeftOut() throws {
        let many = (0..<1100).map { "t\($0)" }
        let note = StoreChangeNote(
            sender: "41aa", sequence: 4, origin: "", event: .stored, target: .key("k"), tags: ["a\nb", "c\r\nd", "e"] + many)
        let payload = try #require(note.payload)
        let read = try #require(StoreChangeNote(payload: payload))
        #expect(read.tags == ["e"] + many.prefix(1023))
        #expect(read.target == .key("k"))
    }

    @Test func anythingElseIsNoNote() {
        #expect(StoreChangeNote(payload: "") == nil)
        // The format before origins: sender, kind, text.
        #expect(StoreChangeNote(payload: "9f2c\nk\nGET api users/1") == nil)
        #expect(StoreChangeNote(payload: "9f2c\nx\norigin\ns\n1\nk\n0\nkey") == nil)
        #expect(StoreChangeNote(payload: "9f2c\n1\norigin\nq\n1\nk\n0\nkey") == nil)
        // A stored change names a key; more tags announced than present.
        #expect(StoreChangeNote(payload: "9f2c\n1\norigin\ns\n1\np\n0\nprefix") == nil)
        #expect(StoreChangeNote(payload: "9f2c\n1\norigin\ns\n1\nk\n3\na\nkey") == nil)
        #expect(StoreChangeNote(sender: "a", sequence: 1, origin: "", event: .invalidated, target: .path("x")).payload == nil)
    }

    @Test func theCacheForwardsOnlyOtherCoordinatorsChangesThatChangedSomething() {
        let cache = CacheProvider(memoryBytes: 1 << 20, store: nil)
        let sent = Mutex<[SharedChangeMessage]>([])
        func note(_ sequence: UInt64, origin: String, _ event: SharedChangeMessage.Event, _ target: InvalidateMessage.Target, changed: Bool = true) -> StoreChange {
            .changed(StoreChangeNote(
                sender: "w2", sequence: sequence, origin: origin, event: event, target: target,
                tags: event == .stored ? ["t"] : [], changedSomething: changed))
        }
        // Nothing is forwarded before the coordinator's welcome named its origin.
        cache.forward(note(1, origin: "B", .invalidated, .key("k")))
        cache.forwardSharedChanges(origin: "A") { change in sent.withLock { $0.append(change) } }
        cache.forward(note(2, origin: "A", .stored, .key("k")))
        cache.forward(note(3, origin: "B", .invalidated, .key("k"), changed: false))
        cache.forward(.mayHaveMissedChanges)
        cache.forward(note(4, origin: "B", .stored, .key("k")))
        cache.forward(note(5, origin: "B", .invalidated, .tag("t")))
        #expect(sent.withLock { $0 } == [
            SharedChangeMessage(change: "w2.4", event: .stored, target: .key("k"), tags: ["t"]),
            SharedChangeMessage(change: "w2.5", event: .invalidated, target: .tag("t")),
        ])
    }
}
