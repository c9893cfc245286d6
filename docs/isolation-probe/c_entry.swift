final class Session {
    var n = 0
    func received(_ m: Int) { n += m }
}
/// A reference to a non-Sendable object of the core's region, carried by libuv callbacks and
/// @Sendable closures; opened only in the core's isolation.
struct CoreRef<Value: AnyObject>: @unchecked Sendable {
    private let value: Value
    private let owner: ObjectIdentifier
    init(_ value: Value, in core: isolated Core) { self.value = value; self.owner = ObjectIdentifier(core) }
    func open(_ core: isolated Core) -> Value {
        precondition(ObjectIdentifier(core) == owner)
        return value
    }
}
actor Core {
    nonisolated let loop: Loop
    var sessions: [Session] = []
    init(loop: Loop) { self.loop = loop }
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
    func register(_ connection: Connection) {
        let session = Session()
        sessions.append(session)
        #if C1
        // C1: non-@Sendable callback capturing the session, entering with assumeIsolated.
        connection.onMessage = { [unowned self, unowned session] m in
            self.assumeIsolated { _ in session.received(m) }
        }
        #endif
        #if C2
        // C2: a CoreRef carried by a @Sendable callback, opened in the core's isolation.
        let ref = CoreRef(session, in: self)
        let handler: @Sendable (Int) -> Void = { [unowned self] m in
            self.assumeIsolated { core in ref.open(core).received(m) }
        }
        connection.onMessage = handler
        #endif
        #if C3
        // C3: opening a CoreRef outside the core is rejected.
        let ref = CoreRef(session, in: self)
        Task.detached { ref.open(self).received(1) }
        #endif
        #if C4
        // C4: a non-Sendable closure stored in a non-Sendable class of the core's region.
        final class Timer { var fire: (() -> Void)? }
        let t = Timer()
        t.fire = { session.received(3) }
        Task.detached { t.fire?() }
        #endif
    }
}
