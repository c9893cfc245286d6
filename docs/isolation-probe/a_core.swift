// (a) One actor on the loop's executor owning non-Sendable classes.
final class Session {            // non-Sendable: no LoopBound
    let connection: Connection
    var outstanding: Set<Int> = []
    var onSlotFreed: ((Session) -> Void)?
    init(connection: Connection) { self.connection = connection }
    func received(_ m: Int) { outstanding.remove(m); onSlotFreed?(self) }
}
final class Pool {               // non-Sendable
    var workers: [Session] = []
    func add(_ s: Session) { workers.append(s); s.onSlotFreed = { [unowned self] w in grant(w) } }
    func grant(_ s: Session) {}
}
actor Core {
    nonisolated let loop: Loop
    var pools: [String: Pool] = [:]
    init(loop: Loop) { self.loop = loop }
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    func register(_ connection: Connection, kind: String) {
        let session = Session(connection: connection)
        pools[kind, default: Pool()].add(session)
        #if A1
        // A1: the libuv callback captures the non-Sendable session directly.
        connection.onMessage = { [unowned session] m in session.received(m) }
        #endif
        #if A2
        // A2: the callback captures only the actor and enters it with assumeIsolated.
        connection.onMessage = { [unowned self] m in
            self.assumeIsolated { core in core.pools[kind]?.workers.first?.received(m) }
        }
        #endif
        #if A3
        // A3: @Sendable callback capturing the non-Sendable session.
        let handler: @Sendable (Int) -> Void = { [unowned session] m in session.received(m) }
        connection.onMessage = handler
        #endif
        #if A4
        // A4: @Sendable callback, session captured through assumeIsolated.
        let handler: @Sendable (Int) -> Void = { [unowned self, unowned session] m in
            self.assumeIsolated { _ in session.received(m) }
        }
        connection.onMessage = handler
        #endif
        #if A5
        // A5: hand the session out of the actor to a Task.
        Task.detached { session.received(1) }
        #endif
        #if A6
        // A6: a nonisolated async method of Session called from the actor.
        Task { await session.asyncWork() }
        #endif
    }
}
#if A6
extension Session { nonisolated func asyncWork() async { received(2) } }
#endif
