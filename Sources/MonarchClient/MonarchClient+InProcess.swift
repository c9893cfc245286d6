import Monarch
import MonarchTransport

extension MonarchClient {
    /// A client of a coordinator in this same process, with no socket: `connect` makes each of
    /// its connections (the first, and one after each loss) — a ``MessageConnection`` the
    /// coordinator has accepted already, whose first message is its `welcome`, such as the end
    /// `Coordinator.attachInMemoryClient(token:)` returns (run on the coordinator's loop). The
    /// client is the same as one on a socket: requests, deadlines, heartbeats, reconnection,
    /// watches and invalidation, over the connection's messages, never encoded when it is in
    /// memory. `name` names the coordinator in errors.
    ///
    /// No hello is sent: whatever `connect` does to be admitted (a token) is its own, and
    /// ``Options/token`` and ``Options/loop`` are not used; ``Options/connectTimeout`` bounds
    /// the wait for the welcome.
    ///
    /// ```swift
    /// let client = try await MonarchClient.connect(inProcess: "coordinator") {
    ///     try await coordinator.loop.submit { try coordinator.attachInMemoryClient() }
    /// }
    /// ```
    ///
    /// - Throws: ``MonarchError/transport(_:)`` with kind `cannotConnect` when `connect`
    ///   throws, or its connection's first message is no welcome.
    public static func connect(
        inProcess name: String = "in-process coordinator", options: Options = Options(),
        _ connect: @escaping @Sendable () async throws -> any MessageConnection
    ) async throws(MonarchError) -> MonarchClient {
        let core = ClientCore(endpoint: .inProcess(name: name, connect: connect), options: options)
        try await core.dialFirst()
        return MonarchClient(core: core)
    }
}
