/// The secrets of `auth:`, one per role, as parsed (each `${VAR}`-expanded, none empty, no
/// two alike).
struct AuthSecrets: Equatable {
    /// `token`: clients.
    var token: String?
    /// `adminToken`: admins.
    var adminToken: String?
    /// `workerToken`: workers that dial in from elsewhere.
    var workerToken: String?
    /// `metricsToken`: metrics scrapers.
    var metricsToken: String?
}

extension Configuration {
    /// The keys of `auth:`, one per role.
    static let authKeys = ["token", "adminToken", "workerToken", "metricsToken"]

    /// Parses `auth`: a secret per role, each with `${VAR}` expanded from `environment`, none
    /// empty, and no two the same (the coordinator knows a role by its secret).
    static func parseAuth(_ node: ConfigNode, environment: [String: String]) throws(ConfigError) -> AuthSecrets {
        let auth = try node.mapping(allowedKeys: authKeys)
        var secrets = AuthSecrets()
        var seen: [String: String] = [:]
        func secret(_ key: String) throws(ConfigError) -> String? {
            guard let secretNode = auth.optional(key) else { return nil }
            let value = try expandVariables(
                in: try secretNode.string(expecting: "a secret string, such as ${MONARCH_TOKEN}"), from: environment,
                at: secretNode)
            guard !value.isEmpty else { throw secretNode.error("the \(key) is empty") }
            if let other = seen[value] {
                throw secretNode.error(
                    "auth.\(key) is the same secret as auth.\(other); each role needs its own, since the coordinator knows a role by its secret")
            }
            seen[value] = key
            return value
        }
        secrets.token = try secret("token")
        secrets.adminToken = try secret("adminToken")
        secrets.workerToken = try secret("workerToken")
        secrets.metricsToken = try secret("metricsToken")
        return secrets
    }

    /// Rejects listeners other machines can reach (see ``isLocal(_:)``) whose role has no
    /// secret: client listeners without `auth.token`, a worker listener without
    /// `auth.workerToken`; and an HTTP listener on TCP when clients need a secret (the front
    /// door asks for none, so any local user would pass by it; a Unix socket is this user's).
    static func requireSecretsIfReachable(_ listeners: Listeners, secrets: AuthSecrets) throws(ConfigError) {
        if secrets.token != nil || secrets.adminToken != nil, let open = listeners.http.first(where: {
            if case .tcp = $0.address { return true } else { return false }
        }) {
            throw open.node.error(
                "\(open.address) would let any local user past auth.token (the HTTP front door asks for no secret "
                    + "yet): with auth set, give listen.http Unix sockets only")
        }
        if secrets.token == nil, let exposed = listeners.clients.first(where: { !isLocal($0.address) }) {
            throw exposed.node.error(
                "\(exposed.address) can be reached from other machines, so auth.token is required "
                    + "(for example token: ${MONARCH_TOKEN}); listen on 127.0.0.1 or a Unix socket otherwise"
            )
        }
        if secrets.workerToken == nil, !isLocal(listeners.workers.address) {
            throw listeners.workers.node.error(
                "\(listeners.workers.address) can be reached from other machines, so auth.workerToken is required "
                    + "(for example workerToken: ${MONARCH_WORKER_TOKEN}; workers present it from MONARCH_WORKER_TOKEN); "
                    + "listen on 127.0.0.1 or a Unix socket otherwise"
            )
        }
    }
}
