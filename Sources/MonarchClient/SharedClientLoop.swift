import Monarch
import MonarchLoop
import Synchronization

/// The event loop every client of the process shares unless given one: started on first use,
/// running until the process exits, so connecting never starts a thread per client and a
/// client that is never closed leaves no thread behind.
enum SharedClientLoop {
    private static let loop = Mutex<EventLoop?>(nil)

    /// The shared loop, started now if this is its first use.
    ///
    /// - Throws: ``MonarchError/transport(_:)`` (`cannotConnect`) when libuv cannot start a loop.
    static func get() throws(MonarchError) -> EventLoop {
        let result = loop.withLock { loop -> Result<EventLoop, MonarchError> in
            if let loop { return .success(loop) }
            do {
                let started = try EventLoop(name: "monarch-client")
                loop = started
                return .success(started)
            } catch {
                return .failure(.transport(.init(.cannotConnect, "cannot start the client's event loop: \(error)")))
            }
        }
        return try result.get()
    }
}
