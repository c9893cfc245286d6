import Foundation
import Monarch
import MonarchClient
import MonarchWire
import TestOrigins
import Testing

/// The next change of `watch`, or nil when it ended; fails the test after 20 s.
private func nextChange(_ watch: CacheWatch) async throws -> CacheChange? {
    try await within(20, "a change of \(watch.targets)") {
        var iterator = watch.makeAsyncIterator()
        return await iterator.next()
    }
}

@Suite("Watch", .serialized)
struct WatchTests {
    @Test("A watch on another connection hears of entries stored, refreshed and invalidated by path, prefix and tag; unwatch ends it")
    func acrossConnections() async throws {
        try await withTaggedOrigin { cluster, client in
            let watcher = try await cluster.connect()
            defer { Task { await watcher.close() } }
            let byPath = try await watcher.watch(.path("api/tagged/w"))
            #expect(byPath.targets == ["GET api api/tagged/w", "HEAD api api/tagged/w"])
            let byPrefix = try await watcher.watch(.pathPrefix("api/tagged/"))
            let byTag = try await watcher.watch(.tag("users"))
            #expect(try await cluster.status().counter("watches") == 3)

            var short = Request(path: "api/tagged/w")
            short.route.ttl = .milliseconds(1)
            _ = try await perform(client, short)
            #expect(try await nextChange(byPath) == CacheChange(kind: .stored, key: "GET api api/tagged/w"))
            #expect(try await nextChange(byPrefix) == CacheChange(kind: .stored, key: "GET api api/tagged/w"))

            // Stale after 1 ms: the next read revalidates, and the write-back refreshes the entry.
            try await Task.sleep(for: .milliseconds(50))
            _ = try await perform(client, Request(path: "api/tagged/w"))
            #expect(try await nextChange(byPath) == CacheChange(kind: .refreshed, key: "GET api api/tagged/w"))
            #expect(try await nextChange(byPrefix)?.kind == .refreshed)

            let dropped = try await client.invalidate(path: "api/tagged/w")
            #expect(dropped.removed == 1)
            #expect(try await nextChange(byPath) == CacheChange(kind: .invalidated, key: "GET api api/tagged/w"))
            #expect(try await nextChange(byPrefix) == CacheChange(kind: .invalidated, key: "GET api api/tagged/w"))

            _ = try await perform(client, Request(path: "api/tagged/t?keys=users"))
            let stored = try await nextChange(byTag)
            #expect(stored == CacheChange(kind: .stored, key: "GET api api/tagged/t?keys=users", tags: ["users"]))
            #expect(try await nextChange(byPrefix)?.key == "GET api api/tagged/t?keys=users")
            _ = try await client.invalidate(tag: "users")
            #expect(try await nextChange(byTag) == CacheChange(kind: .invalidated, tag: "users"))
            // The prefix watch follows the key the tag dropped.
            #expect(try await nextChange(byPrefix) == CacheChange(kind: .invalidated, tag: "users"))

            await byTag.cancel()
            #expect(try await nextChange(byTag) == nil)
            try await eventually("the unwatch") { try await cluster.status().counter("watches") == 2 }
            // A key prefix covering the path watch: both hear of it.
            _ = try await perform(client, Request(path: "api/tagged/w"))
            #expect(try await nextChange(byPath)?.kind == .stored)
            _ = try await client.invalidate(.prefix("GET api api/"))
            #expect(try await nextChange(byPath) == CacheChange(kind: .invalidated, prefix: "GET api api/"))
        }
    }

    @Test("monarch watch and monarch invalidate refuse the same bad targets the same way (exit 64, before any connection)")
    func badTargetsAreRefusedAlike() async throws {
        for (arguments, problem) in [
            ([String](), "give one of PATH"),
            (["users/1", "--tag", "t"], "not several"),
            (["--tag", ""], "--tag must not be empty"),
            (["--prefix", ""], "--prefix must not be empty"),
            (["--domain", "api", "--tag", "t"], "--domain goes with PATH or --prefix"),
            (["GET api users/1"], "looks like a raw cache key"),
            (["http://example.com/users/1"], "is a URL"),
        ] {
            for command in ["watch", "invalidate"] {
                let result = try await Spawned.run(Executables.monarch, [command] + arguments + ["--address", "unix:/nonexistent.sock"])
                #expect(result.status == 64, "\(command) \(arguments): \(result.stderr)")
                #expect(result.stderr.contains(problem), "\(command) \(arguments): \(result.stderr)")
            }
        }
    }

    @Test("Two processes: monarch watch hears of this process's fetch and invalidation; this process hears of monarch get's")
    func acrossProcesses() async throws {
        try await withTaggedOrigin { cluster, client in
            let address = "\(cluster.clientAddress)"
            let other = try Spawned(Executables.monarch, ["watch", "--tag", "procs", "--count", "2", "--address", address])
            let watching = try await other.waitForOutput(containing: "watching")
            #expect(watching == "watching procs")
            _ = try await perform(client, Request(path: "api/tagged/p?keys=procs"))
            _ = try await other.waitForOutput(containing: "stored")
            _ = try await client.invalidate(tag: "procs")
            #expect(try await other.waitForExit(timeout: 30) == 0)
            #expect(other.stdout.text == "watching procs\nstored GET api api/tagged/p?keys=procs [procs]\ninvalidated tag procs\n")

            let watch = try await client.watch(.path("api/tagged/q"))
            let get = try await Spawned.run(Executables.monarch, ["get", "api/tagged/q", "--address", address])
            #expect(get.status == 0, "\(get.stderr)")
            #expect(try await nextChange(watch) == CacheChange(kind: .stored, key: "GET api api/tagged/q"))
            let invalidate = try await Spawned.run(Executables.monarch, ["invalidate", "api/tagged/q", "--address", address])
            #expect(invalidate.status == 0, "\(invalidate.stderr)")
            #expect(try await nextChange(watch)?.kind == .invalidated)
        }
    }

    @Test("A watcher that does not read gets a bounded queue, then one overflow counting what it lost; others are not held up")
    func slowWatcherOverflows() async throws {
        try await withTaggedOrigin(extraLimits: ["watchEvents: 3"]) { cluster, client in
            let slow = try RawSocket(path: "\(cluster.folder.path)/c.sock", receiveTimeoutSeconds: 30)
            guard case .welcome? = try slow.greet() else { throw SpawnError("no welcome") }
            slow.send(.watch(WatchMessage(id: 1, target: .prefix("GET api api/tagged/s"))))
            guard case .result? = try slow.nextMessageAnsweringPings() else { throw SpawnError("the watch was refused") }
            // An answer of 6 MB the watcher does not read: its connection stops taking events.
            slow.send(.request(RequestMessage(id: 2, path: "api/big?bytes=6000000", policy: .noCache)))

            var generated = 0
            while generated < 300 {
                _ = try await perform(client, Request(path: "api/tagged/s\(generated)"))
                generated += 1
                try await cluster.waitForWriteBacks(generated)
                if try await cluster.status().counter("watchEventsDropped") ?? 0 >= 2 { break }
            }
            #expect(generated < 300, "no event was ever dropped")

            // The watcher reads again: its answer, then the events it had, then one overflow.
            var stored = 0
            var lost = 0
            var answered = false
            while lost == 0 || !answered {
                switch try slow.nextMessageAnsweringPings() {
                case .response(let response)?:
                    #expect(response.id == 2 && response.body?.count == 6_000_000)
                    answered = true
                case .changed(let change)?:
                    #expect(lost == 0, "an event after the overflow")
                    if change.event == .overflow { lost = change.dropped ?? 0 } else { stored += 1 }
                case let other:
                    throw SpawnError("unexpected \(String(describing: other))")
                }
            }
            #expect(lost >= 2)
            #expect(stored + lost == generated, "every event arrived or was counted in the overflow")
            #expect(try await cluster.status().counter("watchEventsDropped") == lost)
        }
    }

    @Test("The client keeps at most bufferSize changes for a task that does not iterate, then one overflow counting the rest")
    func clientBufferOverflows() async throws {
        try await withTaggedOrigin { cluster, client in
            let watcher = try await cluster.connect()
            defer { Task { await watcher.close() } }
            let watch = try await watcher.watch(.pathPrefix("api/tagged/"), bufferSize: 2)
            for index in 0..<5 { _ = try await perform(client, Request(path: "api/tagged/b\(index)")) }
            try await eventually("5 changes sent") { try await cluster.status().counter("watchEventsSent") == 5 }
            // Answers follow the changes sent before them on the connection: all 5 have arrived.
            _ = try await watcher.status()
            #expect(try await nextChange(watch)?.kind == .stored)
            #expect(try await nextChange(watch)?.kind == .stored)
            #expect(try await nextChange(watch) == CacheChange(kind: .overflow, dropped: 3))
            _ = try await perform(client, Request(path: "api/tagged/b9"))
            #expect(try await nextChange(watch)?.key == "GET api api/tagged/b9")
        }
    }

    @Test("restoreWatches sends every active watch again under a fresh id, marks the gap with an overflow, and changes keep coming")
    func restore() async throws {
        try await withTaggedOrigin { cluster, client in
            let watcher = try await cluster.connect()
            defer { Task { await watcher.close() } }
            let watch = try await watcher.watch(.path("api/tagged/r"))
            let ended = try await watcher.watch(.tag("gone"))
            await ended.cancel()
            #expect(await watcher.restoreWatches() == 1)
            #expect(try await nextChange(watch) == CacheChange(kind: .overflow))
            // Here on the same connection the old id stays registered too; on a new connection
            // (after a reconnect) only the fresh one exists.
            try await eventually("the restored watch") { try await cluster.status().counter("watches") == 2 }
            _ = try await perform(client, Request(path: "api/tagged/r"))
            #expect(try await nextChange(watch) == CacheChange(kind: .stored, key: "GET api api/tagged/r"))
        }
    }

    @Test("A silent client holding a watch is not closed as idle; a silent one without is")
    func watchersAreNotIdle() async throws {
        try await withTaggedOrigin(extraLimits: ["idleTimeout: 1s"]) { cluster, idle in
            let watcher = try await cluster.connect()
            defer { Task { await watcher.close() } }
            let watch = try await watcher.watch(.path("api/tagged/i"))
            try await eventually("the idle client's close") { try await cluster.status().counter("idleClientsClosed") == 1 }
            // A second silent client, connected after the watcher last spoke: once it is closed
            // as idle, the watcher has been silent longer still, and was spared.
            let later = try await cluster.connect()
            defer { Task { await later.close() } }
            try await eventually("the later idle client's close") {
                try await cluster.status().counter("idleClientsClosed") ?? 0 >= 2
            }
            #expect(try await cluster.status().counter("idleClientsClosed") == 2)
            let fetcher = try await cluster.connect()
            _ = try await perform(fetcher, Request(path: "api/tagged/i"))
            await fetcher.close()
            #expect(try await nextChange(watch)?.kind == .stored)
            _ = idle
        }
    }

    @Test("Watches are refused clearly: past watchesPerClient, for a path no route matches, for a target over invalidateBytes")
    func refusals() async throws {
        try await withTaggedOrigin(extraLimits: ["watchesPerClient: 2", "invalidateBytes: 64"]) { cluster, client in
            let one = try await client.watch(.tag("a"))
            _ = try await client.watch(.tag("b"))
            do {
                _ = try await client.watch(.tag("c"))
                Issue.record("a third watch was accepted")
            } catch {
                #expect("\(error)".contains("overloaded"), "\(error)")
                #expect("\(error)".contains("limits.watchesPerClient"), "\(error)")
            }
            // Another connection has a share of its own, and an unwatch makes room.
            let other = try await cluster.connect()
            _ = try await other.watch(.tag("c"))
            await other.close()
            await one.cancel()
            _ = try await client.watch(.tag("c"))

            let fresh = try await cluster.connect()
            defer { Task { await fresh.close() } }
            do {
                _ = try await fresh.watch(.path("nowhere/1"))
                Issue.record("a watch on a path no route matches was accepted")
            } catch {
                #expect("\(error)".contains("noRoute"), "\(error)")
            }
            do {
                _ = try await fresh.watch(.key(String(repeating: "k", count: 100)))
                Issue.record("a 100-byte key was accepted")
            } catch {
                #expect("\(error)".contains("requestTooLarge"), "\(error)")
            }
            let cli = try await Spawned.run(Executables.monarch, ["watch", "nowhere/1", "--address", "\(cluster.clientAddress)"])
            #expect(cli.status == 1)
            #expect(cli.stderr.contains("noRoute"), "\(cli.stderr)")
        }
    }
}
