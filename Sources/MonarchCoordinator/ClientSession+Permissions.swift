import Monarch
import MonarchWire

// What a client may ask for: its role's share of the admin messages, and invalidations at a
// bounded rate.
extension ClientSession {
    /// The failure that answers `message` instead of running it, when its sender's role does
    /// not allow it (`forbidden`: scale, status, prefix invalidations and prefix watches are
    /// for admins) or the client has used its invalidations for now (`overloaded`,
    /// ``Configuration/Limits/invalidationsPerSecond``); nil when it may run. Counts what it refuses.
    func refusal(of message: WireMessage) -> FailureMessage? {
        guard role != .admin else { return nil }
        let id: MessageID
        let what: String
        switch message {
        case .status(let status): (id, what) = (status.id, "status")
        case .scale(let scale): (id, what) = (scale.id, "scale")
        case .invalidate(let invalidate):
            if invalidate.target.isPrefix {
                (id, what) = (invalidate.id, "an invalidation by prefix")
            } else if invalidationBudget.take() {
                return nil
            } else {
                coordinator.overloadedRequests += 1
                let rate = coordinator.limits.invalidationsPerSecond
                return FailureMessage(id: invalidate.id, error: ChainError(
                    .overloaded, "this connection made more than \(rate) invalidations in a second (limits.invalidationsPerSecond); slow down"
                ).detail)
            }
        case .watch(let watch) where watch.target.isPrefix:
            (id, what) = (watch.id, "a watch of a prefix")
        default:
            return nil
        }
        coordinator.forbiddenRequests += 1
        coordinator.peerLog.log(.warning, "client \(self.id): refused \(what): it needs the admin secret", to: coordinator.logger)
        return FailureMessage(id: id, error: ChainError(
            .forbidden, "\(what) is for admins: connect with the admin secret (auth.adminToken)").detail)
    }
}

extension CacheTarget {
    /// Whether the target names every entry under a prefix (a key prefix or a path prefix),
    /// rather than entries by key, path or tag.
    var isPrefix: Bool {
        switch self {
        case .prefix, .pathPrefix: true
        case .key, .tag, .path: false
        }
    }
}
