import MonarchConfig
import MonarchWire

/// What a client connection may do, as its hello's secret decided.
enum ClientRole: String, Sendable, Equatable {
    /// Requests, and invalidations and watches of named keys, paths and tags.
    case client
    /// Everything a client may do, and scale, status, prefix invalidations and prefix watches.
    case admin
}

/// The door a connection came in by: what its listener takes and where it is.
struct Door: Sendable, Equatable, Hashable {
    /// Clients or workers.
    var takes: Hello.Role
    /// A Unix socket (or a connection made inside the process), which only processes of this
    /// machine allowed by the socket file's permissions reach.
    var isUnixSocket: Bool
    /// Whether only this machine can reach it (a Unix socket, or TCP on a loopback address).
    var isLocal: Bool
}

/// Knows each role by its secret (the configuration's `auth:`), and so which role a hello earns.
///
/// - A client hello earns `admin` with `auth.adminToken`, `client` with `auth.token`. Without
///   `auth.token`, a local listener takes clients with no secret. Without `auth.adminToken`,
///   the admins are those who reach a Unix socket (the socket file's permissions guard it),
///   with `auth.token` when one is set; over TCP, even on a loopback port any local process
///   reaches, nobody is an admin without `auth.adminToken`.
/// - A worker hello is let in with `auth.workerToken`; without any secret configured, a local
///   worker listener takes workers with none. (The workers the coordinator starts prove their
///   names with keys of their own, checked before this.)
struct RoleGate: Sendable {
    /// `auth.token`.
    var token: String?
    /// `auth.adminToken`.
    var adminToken: String?
    /// `auth.workerToken`.
    var workerToken: String?

    /// The secrets of `configuration`.
    init(_ configuration: Configuration) {
        self.init(token: configuration.token, adminToken: configuration.adminToken, workerToken: configuration.workerToken)
    }

    /// A gate with these secrets.
    init(token: String?, adminToken: String?, workerToken: String?) {
        self.token = token
        self.adminToken = adminToken
        self.workerToken = workerToken
    }

    /// The role a client presenting `secret` at `door` gets; nil when it is refused.
    func clientRole(presenting secret: String?, at door: Door) -> ClientRole? {
        if Self.matches(secret, adminToken) { return .admin }
        guard Self.matches(secret, token) || (token == nil && door.isLocal) else { return nil }
        return adminToken == nil && door.isUnixSocket ? .admin : .client
    }

    /// Whether a worker presenting `secret` at `door` is let in (one the coordinator started
    /// is known by its key instead).
    func admitsWorker(presenting secret: String?, at door: Door) -> Bool {
        if Self.matches(secret, workerToken) { return true }
        return door.isLocal && token == nil && adminToken == nil && workerToken == nil
    }

    /// Whether a presented secret is the expected one, in time that does not depend on where
    /// they differ (so a secret cannot be guessed byte by byte).
    static func matches(_ presented: String?, _ expected: String?) -> Bool {
        guard let presented, let expected else { return false }
        let a = Array(presented.utf8), b = Array(expected.utf8)
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0 && a.count == b.count
    }
}
