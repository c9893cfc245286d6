import MonarchWire

/// What a client's request is answered with: a message of its own, or the response of a trip
/// it shared with other requests, prepared once for all of their frames.
enum ClientAnswer: Sendable {
    /// A message for this request alone (a `response` or a `failure`).
    case message(WireMessage)
    /// A response prepared once for many frames (a shared trip's, or the hot tier's), framed
    /// with the id of request `id` and, when given, the age `ageMs`.
    case prepared(PreparedResponse, id: MessageID, ageMs: UInt64?)
    /// A hot hit answering a relayed request, which an HTTP client takes as it was rendered
    /// when kept (see ``RelayedHotHit``).
    case relayedHit(RelayedHotHit.Hit)

    /// Whether the answer is a response (shared or not), as opposed to a failure or any
    /// other message.
    var isResponse: Bool {
        switch self {
        case .message(.response): true
        case .message: false
        case .prepared, .relayedHit: true
        }
    }

    /// The id of the request answered.
    var id: MessageID? {
        switch self {
        case .message(let message): message.id
        case .prepared(_, let id, _): id
        case .relayedHit(let hit): hit.id
        }
    }
}
