import Monarch
import MonarchWire

/// A round trip to the coordinator, and what it says of itself (``MonarchClient/ping(deadline:)``).
public struct CoordinatorPing: Sendable, Equatable {
    /// How long the ping took to be answered.
    public var roundTrip: Duration
    /// The coordinator's software release; nil when it does not say.
    public var release: String?
    /// How long the coordinator has run; nil when it does not say.
    public var uptime: Duration?

    /// A ping's outcome.
    public init(roundTrip: Duration, release: String?, uptime: Duration?) {
        self.roundTrip = roundTrip
        self.release = release
        self.uptime = uptime
    }
}

extension MonarchClient {
    /// Sends the coordinator a ping and waits for its pong, within `deadline`.
    ///
    /// - Returns: the round trip, and the coordinator's release and uptime as it announced
    ///   them when this connection was made.
    /// - Throws: ``MonarchError``: `timeout` without a pong within `deadline`, `transport`
    ///   when the connection is lost.
    public func ping(deadline: Duration = .seconds(5)) async throws(MonarchError) -> CoordinatorPing {
        let link = try await core.link()
        let clock = ContinuousClock()
        let sent = clock.now
        let answer = try await core.exchange(idempotent: true, deadline: deadline, what: "ping") { id in
            .ping(PingMessage(id: id))
        }
        let roundTrip = clock.now - sent
        guard case .pong = answer else {
            throw .transport(.init(.connectionLost, "unexpected \(answer.type) in answer to a ping"))
        }
        let uptime = link.welcome.uptimeMs.map { .milliseconds($0) + (sent - link.welcomedAt) }
        return CoordinatorPing(roundTrip: roundTrip, release: link.welcome.release, uptime: uptime)
    }
}
