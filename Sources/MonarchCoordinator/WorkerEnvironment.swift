#if canImport(Glibc)
import Glibc
#endif
import MonarchConfig

/// The environment each worker the coordinator starts gets: this process's, less every secret
/// the worker does not need. No worker gets a role's secret (`auth:`; a started worker proves
/// itself with a key of its own); only cache workers with a Redis store get its password.
struct WorkerEnvironment: Sendable {
    /// The variables no worker is given, whatever their values.
    static let secretNames: Set<String> = [
        "MONARCH_TOKEN", "MONARCH_ADMIN_TOKEN", "MONARCH_WORKER_TOKEN", "MONARCH_METRICS_TOKEN", "MONARCH_REDIS_PASSWORD",
    ]
    /// The variable a cache worker reads its Redis store's password from.
    static let redisPasswordName = "MONARCH_REDIS_PASSWORD"

    /// What every worker starts from: the base, less the secrets.
    private let common: [String: String]
    /// The Redis password of each cache pool that has one, by kind.
    private let redisPasswords: [String: String]

    /// The environments for the workers of `configuration`, from `base` (nil: this process's).
    init(configuration: Configuration, base: [String: String]? = nil) {
        var secrets = Set([configuration.token, configuration.adminToken, configuration.workerToken, configuration.metricsToken]
            .compactMap { $0 })
        var passwords: [String: String] = [:]
        for pool in configuration.workers {
            if case .cache(let cache) = pool.settings, let password = cache.password {
                passwords[pool.kind] = password
                secrets.insert(password)
            }
        }
        // A secret is left out under any name it may have been given (`token: ${MY_SECRET}`).
        common = (base ?? Self.inherited()).filter { name, value in
            !Self.secretNames.contains(name) && !secrets.contains(value)
        }
        redisPasswords = passwords
    }

    /// The environment of a worker of `kind`.
    func environment(for kind: String) -> [String: String] {
        var environment = common
        if let password = redisPasswords[kind] { environment[Self.redisPasswordName] = password }
        return environment
    }

    /// This process's environment.
    private static func inherited() -> [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return result
    }
}
