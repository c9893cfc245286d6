import Monarch
import MonarchLoop
import MonarchWire

/// A connection to a Monarch coordinator, a ``MonarchService``: requests go down the
/// cluster's chain and come back as responses, many at once on one connection.
///
/// It survives: every client of a process shares one event loop; idle connections are pinged
/// and a silent coordinator is taken as gone; after the connection ends the client
/// reconnects with back-off, sending idempotent requests (`GET`, `HEAD`, `PUT`, `DELETE`,
/// `OPTIONS`) in flight again, while a `POST` or `PATCH` in flight fails with
/// ``MonarchError/Transport/Kind/outcomeUnknown`` (it may or may not have happened). Each
/// request's deadline is enforced here too. ``close()`` is optional: a client dropped without
/// it closes its connection.
///
/// ```swift
/// let client = try await MonarchClient.connect(to: SocketAddress(parsing: "unix:.monarch/monarch.sock"))
/// let user = try await client.perform(CurrentUser())
/// ```
public final class MonarchClient: MonarchService {
    /// The connection machinery; features of the client (in extensions) reach the push seam
    /// through it (``ClientCore/onPush``, ``ClientCore/onReconnected``).
    let core: ClientCore
    /// The active watches (``watch(_:bufferSize:)``), restored after each reconnection.
    let watchTable = WatchTable()

    /// A client over `core`, whose first connection is made.
    init(core: ClientCore) {
        self.core = core
        startWatching()
    }

    deinit {
        core.shutdownSoon()
        watchTable.finishAll()
    }

    /// Connects to the coordinator at `address` (a TCP host name is resolved) and says hello.
    ///
    /// - Throws: ``MonarchError/transport(_:)`` with kind `cannotConnect`.
    public static func connect(to address: SocketAddress, options: Options = Options()) async throws(MonarchError)
        -> MonarchClient
    {
        let loop: EventLoop
        if let given = options.loop { loop = given } else { loop = try SharedClientLoop.get() }
        let core = ClientCore(endpoint: .socket(address, loop: loop), options: options)
        try await core.dialFirst()
        return MonarchClient(core: core)
    }

    /// The coordinator's answer to `request`, whatever its status, under the request's domain
    /// (``RequestDomain/any``: the route's). Waits for a reconnection when the connection is
    /// down. Cancelling the calling task sends a `cancel` and throws ``MonarchError/cancelled``.
    ///
    /// - Throws: ``MonarchError``: `timeout` when the deadline (the request's, else
    ///   ``Options/deadline``) passes; `transport` when the connection was lost and the
    ///   request could not be retried; the chain's error as ``MonarchError/init(_:)`` maps it.
    public func perform(_ request: Request) async throws(MonarchError) -> Response {
        _ = try request.domain.wireName()
        let deadline = request.deadline ?? core.options.deadline
        let answer = try await core.exchange(idempotent: request.isIdempotent, deadline: deadline, what: request.path) { id in
            // The domain was checked above: the message cannot fail to build.
            .request((try? request.message(id: id)) ?? RequestMessage(id: id, path: request.path))
        }
        switch answer {
        case .response(let response): return Response(response)
        case .failure(let failure): throw MonarchError(ChainError(failure.error))
        default: throw .transport(.init(.connectionLost, "unexpected \(answer.type) in answer to a request"))
        }
    }

    /// The coordinator's status report: pools, workers, counters, per-domain figures.
    ///
    /// - Throws: ``MonarchError``; `chainFailure` when the coordinator refuses.
    public func status() async throws(MonarchError) -> StatusReport {
        try await admin("status") { id in .status(StatusMessage(id: id)) }.report(as: StatusReport.self, what: "status")
    }

    /// Makes `count` local workers of `kind` run (the coordinator's own, started by `monarch
    /// up`): returns once new workers have registered and leaving ones have drained and exited.
    ///
    /// - Returns: what changed, and how many workers of the kind dialled in from elsewhere.
    /// - Throws: ``MonarchError/chainFailure(_:)`` when the coordinator starts no workers, has
    ///   none of that kind, or a new worker did not register.
    public func scale(_ kind: String, to count: Int) async throws(MonarchError) -> ScaleReport {
        try await admin("scale", deadline: .seconds(120)) { id in .scale(ScaleMessage(id: id, kind: kind, count: count)) }
            .report(as: ScaleReport.self, what: "scale")
    }

    /// Drops cached entries on every cache worker: by resource path (resolved through the
    /// coordinator's routes), path prefix, tag, exact key or key prefix (see ``CacheTarget``;
    /// ``invalidate(path:domain:)`` and its siblings say it shorter). Keys read
    /// `METHOD domain path?sorted-query`, such as `GET api users/1` (``CacheKey``).
    ///
    /// - Returns: how many entries were removed (0 when nothing was cached under the target),
    ///   on how many workers, and what the target resolved to.
    /// - Throws: ``MonarchError/chainFailure(_:)`` when no route matches a path (`noRoute`), no
    ///   cache worker is connected or one did not answer.
    public func invalidate(_ target: InvalidateMessage.Target) async throws(MonarchError) -> Invalidation {
        Invalidation(try await admin("invalidate") { id in .invalidate(InvalidateMessage(id: id, target: target)) })
    }

    /// Closes the connection and stops reconnecting; calls still waiting, and later ones,
    /// throw ``MonarchError/transport(_:)`` (`connectionLost`). Optional: a client released
    /// without it closes its connection in the background.
    public func close() async {
        await core.shutdown()
        watchTable.finishAll()
    }

    /// Sends an admin message (idempotent: sent again after a reconnection) and returns its result.
    func admin(
        _ what: String, deadline: Duration = .seconds(30), _ make: @escaping @Sendable (MessageID) -> WireMessage
    ) async throws(MonarchError) -> ResultMessage {
        switch try await core.exchange(idempotent: true, deadline: deadline, what: what, make) {
        case .result(let result): return result
        case .failure(let failure): throw .chainFailure(ChainError(failure.error))
        case let other: throw .transport(.init(.connectionLost, "unexpected \(other.type) in answer to \(what)"))
        }
    }
}

extension ResultMessage {
    /// The result's report as a `T`.
    fileprivate func report<T: Decodable>(as type: T.Type, what: String) throws(MonarchError) -> T {
        do {
            return try report(as: type)
        } catch {
            throw .decoding(type: "\(type)", reason: "the coordinator's \(what) report is malformed: \(error)", bodyPrefix: "")
        }
    }
}
