// (b) Non-Sendable classes owned by one actor; async methods run in the caller's isolation.
func loopExecute(_ body: @escaping @Sendable () -> Void) {}

final class Session {
    var waiting: [Int: CheckedContinuation<Int, Never>] = [:]
    #if B1
    // B1: nonisolated(nonsending) async method on a non-Sendable class, awaited from the core.
    nonisolated(nonsending) func forward(_ id: Int) async -> Int {
        await withCheckedContinuation { c in waiting[id] = c }
    }
    #endif
    #if B2
    // B2: same, with an explicit `isolated Core` parameter.
    func forward(_ id: Int, core: isolated Core) async -> Int {
        await withCheckedContinuation { c in waiting[id] = c }
    }
    #endif
    #if B3
    // B3: plain nonisolated async (language-mode-6 default: runs on the global executor).
    func forward(_ id: Int) async -> Int {
        await withCheckedContinuation { c in waiting[id] = c }
    }
    #endif
    #if B4
    // B4: cancellation handler touching the non-Sendable session directly.
    nonisolated(nonsending) func forward(_ id: Int) async -> Int {
        await withTaskCancellationHandler {
            await withCheckedContinuation { c in waiting[id] = c }
        } onCancel: {
            loopExecute { [self] in _ = waiting.removeValue(forKey: id) }
        }
    }
    #endif
    #if B5
    // B5: cancellation handler entering the core by Sendable values only.
    nonisolated(nonsending) func forward(_ id: Int, core: Core, kind: String) async -> Int {
        await withTaskCancellationHandler {
            await withCheckedContinuation { c in waiting[id] = c }
        } onCancel: {
            loopExecute { core.assumeIsolated { core in core.cancel(id, kind: kind) } }
        }
    }
    #endif
}

protocol Provider {   // not Sendable
    var name: String { get }
    nonisolated(nonsending) func perform(_ r: Int) async -> Int
}
final class Pool: Provider {
    var name: String { "pool" }
    var sessions: [Session] = []
    nonisolated(nonsending) func perform(_ r: Int) async -> Int {
        #if B2
        return 0
        #elseif B5
        return 0
        #else
        guard let s = sessions.first else { return 0 }
        return await s.forward(r)
        #endif
    }
}

actor Core {
    nonisolated let loop: Loop
    var pools: [String: Pool] = ["a": Pool()]
    var chains: [String: [any Provider]] = [:]
    init(loop: Loop) { self.loop = loop }
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
    func cancel(_ id: Int, kind: String) { _ = pools[kind]?.sessions.first?.waiting.removeValue(forKey: id) }

    func trip(_ r: Int) async -> Int {
        var total = 0
        for provider in chains["d"] ?? [] { total += await provider.perform(r) }
        #if B2
        total += await pools["a"]!.sessions[0].forward(r, core: self)
        #endif
        return total
    }
    // A trip started from the core as a task: isolated to the core, so it may use its pools.
    func begin(_ r: Int) {
        Task { _ = await self.trip(r); _ = await self.pools["a"]?.perform(r) }
    }
    #if B6
    // B6: a Task from an `isolated Core` parameter (not a method) that does not capture it.
    static func beginOutside(_ r: Int, core: isolated Core) {
        let pool = core.pools["a"]!
        Task { _ = await pool.perform(r) }
    }
    #endif
    #if B7
    // B7: same, capturing the isolated parameter: the task inherits the core's isolation.
    static func beginOutside(_ r: Int, core: isolated Core) {
        let pool = core.pools["a"]!
        Task { _ = core; _ = await pool.perform(r) }
    }
    #endif
}
