@testable import MonarchCoordinator
import Testing

@Suite struct RendezvousTests {
    let keys = (0..<30_000).map { "GET api users/\($0)" }

    @Test("every key has one owner, the same every time, and keys spread evenly over 3 workers")
    func spreadsEvenly() {
        let workers = ["cache-1", "cache-2", "cache-3"]
        var counts = [0, 0, 0]
        for key in keys {
            let owner = Rendezvous.owner(of: key, among: workers)!
            #expect(Rendezvous.owner(of: key, among: workers) == owner)
            counts[owner] += 1
        }
        for count in counts {
            // 10,000 expected each; 5 % either way is far outside chance for a sound hash.
            #expect((9_500...10_500).contains(count), "uneven spread: \(counts)")
        }
    }

    @Test("adding a fourth worker moves only the keys it wins (about a quarter); removing one moves only its own")
    func minimalMovement() {
        let three = ["cache-1", "cache-2", "cache-3"]
        let four = three + ["cache-4"]
        var moved = 0
        for key in keys {
            let before = three[Rendezvous.owner(of: key, among: three)!]
            let after = four[Rendezvous.owner(of: key, among: four)!]
            if before != after {
                moved += 1
                #expect(after == "cache-4", "a key moved between old workers")
            }
        }
        #expect((7_000...8_000).contains(moved), "moved \(moved) of 30000")

        let two = ["cache-1", "cache-3"]
        for key in keys {
            let before = three[Rendezvous.owner(of: key, among: three)!]
            let after = two[Rendezvous.owner(of: key, among: two)!]
            if before != "cache-2" { #expect(after == before) }
        }
    }

    @Test("the owner does not depend on the order workers registered in")
    func orderIndependent() {
        let forward = ["cache-1", "cache-2", "cache-3"]
        let backward = Array(forward.reversed())
        for key in keys.prefix(1000) {
            #expect(forward[Rendezvous.owner(of: key, among: forward)!] == backward[Rendezvous.owner(of: key, among: backward)!])
        }
        #expect(Rendezvous.owner(of: "k", among: []) == nil)
    }
}

@Suite struct WorkerLaunchTests {
    @Test("each cache worker gets its own file beside the configured one; no store means memory only")
    func cacheStores() {
        #expect(WorkerLaunch.storePath("sqlite:/var/run/cache.db", ordinal: 1) == "sqlite:/var/run/cache.db")
        #expect(WorkerLaunch.storePath("sqlite:/var/run/cache.db", ordinal: 2) == "sqlite:/var/run/cache-2.db")
        #expect(WorkerLaunch.storePath("sqlite:/var/run.d/cache", ordinal: 3) == "sqlite:/var/run.d/cache-3")
        #expect(WorkerLaunch.storePath("sqlite:/tmp/.cache", ordinal: 2) == "sqlite:/tmp/.cache-2")
        #expect(
            WorkerLaunch.settingArguments(.cache(.init(store: "sqlite:/r/c.db", memoryBytes: 1024)), ordinal: 2)
                == ["--store", "sqlite:/r/c-2.db", "--memory-bytes", "1024"])
        #expect(WorkerLaunch.settingArguments(.cache(.init(store: nil, memoryBytes: nil))) == ["--memory-only"])
    }
}
