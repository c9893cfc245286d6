import MonarchLoop

/// The isolation a coordinator's parts share: every coordinator of a process, its sessions,
/// pools and tables run on one libuv loop, ``loop``, whose thread is this actor's executor.
/// Code marked `@CoordinatorActor` is checked by the compiler to run there; a libuv callback,
/// which the loop calls on that thread without the compiler knowing, enters it through
/// ``assumeIsolated(_:file:line:)``.
///
/// The loop starts the first time it is asked for and runs as long as the process does
/// (`monarch up`, which is the process's whole job, stops it on its way out). A process that
/// runs several coordinators — the in-process tests do — runs them all on that one thread.
@globalActor public actor CoordinatorActor {
    /// The one instance, whose executor is ``loop``.
    public static let shared = CoordinatorActor()

    /// The coordinators' loop.
    public static var loop: EventLoop { shared.loop }

    /// The coordinators' loop.
    public nonisolated let loop: EventLoop

    private init() {
        do {
            loop = try EventLoop(name: "coordinator")
        } catch {
            // libuv cannot initialise a loop only when the process is out of descriptors or memory.
            fatalError("cannot start the coordinator's event loop: \(error)")
        }
    }

    /// Runs this actor's jobs on the loop's thread.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    /// Runs `body` in this actor's isolation, on the loop, and returns what it returns.
    public static func run<T: Sendable>(_ body: @CoordinatorActor @Sendable () throws -> T) async rethrows -> T {
        try await body()
    }

    /// Runs `operation` in this actor's isolation, which the caller promises it is in: on the
    /// loop's thread, as every libuv callback of the loop is. A call from any other thread
    /// stops the process.
    public static func assumeIsolated<T: Sendable>(
        _ operation: @CoordinatorActor () throws -> T, file: StaticString = #fileID, line: UInt = #line
    ) rethrows -> T {
        typealias Unmarked = () throws -> T
        shared.preconditionIsolated("not on the coordinator's loop", file: file, line: line)
        // The check above is what the mark promised: the same function, without it.
        return try withoutActuallyEscaping(operation) { operation in
            try unsafeBitCast(operation, to: Unmarked.self)()
        }
    }
}
