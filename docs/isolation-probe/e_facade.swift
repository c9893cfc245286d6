// The migration shape: the public Sendable facade keeps its API; its state moves into one
// actor on the loop; its methods take the core as an `isolated` parameter.
final class SConnection: @unchecked Sendable {      // libuv handle with @Sendable callbacks
    var onMessage: (@Sendable (Int) -> Void)?
}
final class Pool { var queued = 0; func add() { queued += 1 } }   // non-Sendable
actor Core {
    nonisolated let loop: Loop
    var requestsInFlight = 0
    var pools: [String: Pool] = ["a": Pool()]
    init(loop: Loop) { self.loop = loop }
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
}
final class Coordinator: Sendable {
    let core: Core
    init(loop: Loop) { core = Core(loop: loop) }
    /// Public entry (tests call it on the loop): checked when it runs.
    func start() { core.assumeIsolated { core in self.accept(SConnection(), core) } }
    func admit(_ core: isolated Core) -> Bool {
        core.requestsInFlight += 1
        core.pools["a"]?.add()
        return true
    }
    func accept(_ c: SConnection, _ core: isolated Core) {
        c.onMessage = { [unowned self, unowned core] m in
            core.assumeIsolated { core in _ = self.admit(core) }
        }
        #if E1
        // E1: reaching the core's state without isolation.
        _ = c; print(self.core.requestsInFlight)
        #endif
        #if E2
        // E2: an @Sendable libuv callback capturing a pool.
        let pool = core.pools["a"]!
        c.onMessage = { m in pool.add() }
        #endif
        #if E3
        // E3: calling an isolated-parameter method from a nonisolated context.
        Task.detached { _ = self.admit(self.core) }
        #endif
        #if E4
        // E4: an async isolated-parameter method awaited from a loop-preferring nonisolated task.
        Task.detached { _ = await self.admit(self.core) }
        #endif
    }
}
