import MonarchConfig
@testable import MonarchCoordinator
import MonarchLoop
import MonarchWire
import Testing

/// Watch fan-out under load: a change for many watches goes out over several loop turns, a
/// watcher that does not read is closed once it is `limits.watchQueue` behind, and what the
/// watchers held is given back.
@Suite("Watch fan-out")
struct WatchFanoutTests {
    static let yaml = "domains: { docs: [bundle] }\nroutes: [{ match: \"...\", domain: docs }]\n"
    static let key = "GET docs a"

    /// Starts `count` watches of ``key`` on `client`, numbered from 1.
    func watchKey(_ client: TestClient, count: Int) async throws {
        for id in 1...count {
            try await client.send(.watch(WatchMessage(id: MessageID(id), target: .key(Self.key))))
        }
    }

    /// Waits until the coordinator holds `count` watches.
    func waitForWatches(_ cluster: InProcessCluster, _ count: Int) async throws {
        try await eventually("\(count) watches") {
            await CoordinatorActor.run { cluster.coordinator.watches.count } == count
        }
    }

    @Test("A change for more watches than one turn's share is not told to them all in the callback that made it")
    func fanOutSpansLoopTurns() async throws {
        try await InProcessCluster.with(Self.yaml) { cluster in
            let perClient = 64
            let clientCount = Coordinator.watchWorkPerTurn / perClient + 2
            var clients: [TestClient] = []
            for _ in 0..<clientCount {
                let client = try await cluster.client()
                try await watchKey(client, count: perClient)
                clients.append(client)
            }
            try await waitForWatches(cluster, clientCount * perClient)
            let total = clientCount * perClient
            let sentAtOnce = await CoordinatorActor.run {
                let before = cluster.coordinator.watchEventsSent
                cluster.coordinator.notifyStored(Self.key, tags: [], refreshed: false)
                return cluster.coordinator.watchEventsSent - before
            }
            #expect(sentAtOnce < total, "all \(total) events were sent in the callback that stored the entry")
            // Every watch hears of it, over the next turns.
            for client in clients {
                for watch in 1...perClient {
                    let event = try await client.changed(watch: MessageID(watch))
                    #expect(event.event == .stored && event.key == Self.key)
                }
            }
            #expect(await CoordinatorActor.run { cluster.coordinator.watchEventsSent } == total)
        }
    }

    @Test("A watcher that does not read is closed once limits.watchQueue behind; its events are counted dropped; a reading one keeps hearing; the bytes are given back")
    func slowWatcherIsClosed() async throws {
        try await InProcessCluster.with(Self.yaml + "limits: { watchQueue: 64KB, watchQueueTotal: 1MB }\n") { cluster in
            let slow = try await cluster.client(reading: false)
            try await watchKey(slow, count: 64)
            let reader = try await cluster.client()
            try await watchKey(reader, count: 1)
            try await waitForWatches(cluster, 65)
            // Each change is 64 events for the watcher that does not read: its socket fills,
            // then its queue, then it is closed.
            var changes = 0
            while await CoordinatorActor.run({ cluster.coordinator.watchersClosed }) == 0 {
                changes += 1
                #expect(changes < 5_000, "the watcher was never closed")
                if changes >= 5_000 { return }
                await CoordinatorActor.run { cluster.coordinator.notifyStored(Self.key, tags: [], refreshed: false) }
                // The reader hears of every change, in order.
                let event = try await reader.changed(watch: 1)
                #expect(event.event == .stored || event.event == .overflow)
            }
            // Once it reads, it finds what reached its socket, then the end of its connection.
            slow.startReading()
            #expect(await slow.closed(within: 30))
            let figures = await CoordinatorActor.run {
                (cluster.coordinator.watchEventsDropped, cluster.coordinator.watches.count, cluster.coordinator.statusReport())
            }
            #expect(figures.0 > 0)
            #expect(figures.1 == 1, "the closed watcher's watches are gone")
            #expect(figures.2.watchersClosed == 1 && figures.2.watchEventsDropped == figures.0)
            // What the watchers held is given back (the reader's share once its socket took it).
            try await eventually("the bytes held for watchers given back") {
                await CoordinatorActor.run { cluster.coordinator.watchFanout.totalBytes } == 0
            }
        }
    }
}

extension TestClient {
    /// The next `changed` event of `watch`.
    func changed(watch: MessageID) async throws -> ChangedMessage {
        let message = try await next { if case .changed(let event) = $0 { event.watch == watch } else { false } }
        guard case .changed(let event) = message else { throw InProcessError("not a changed event: \(message.type)") }
        return event
    }
}
