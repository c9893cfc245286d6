import Monarch
import MonarchConfig
import MonarchWire

/// How to start one local worker process: which executable, with which arguments.
struct WorkerLaunch: Sendable, Equatable {
    /// The worker's kind.
    var kind: String
    /// Its place in its pool, from 1: it names the worker (`bundle-1`) and its files.
    var ordinal: Int
    /// Its name, shown in `ps` and status reports (`bundle-1`); the same across restarts.
    var name: String
    /// The executable's path.
    var executable: String
    /// The arguments after the executable.
    var arguments: [String]

    /// The executable of a worker kind: `monarch-KIND-worker` in `directory`.
    static func executable(of kind: String, in directory: String) -> String {
        "\(directory)/monarch-\(kind)-worker"
    }

    /// The launch of the `ordinal`-th worker (from 1) of `pool`, dialling in to
    /// `coordinator` and logging at the pool's `logLevel`, else at `logLevel`.
    static func launch(
        for pool: Configuration.WorkerPool, ordinal: Int, coordinator: SocketAddress, executableDirectory: String,
        logLevel: String
    ) -> WorkerLaunch {
        let name = "\(pool.kind)-\(ordinal)"
        return WorkerLaunch(
            kind: pool.kind, ordinal: ordinal, name: name, executable: executable(of: pool.kind, in: executableDirectory),
            arguments: ["--coordinator", coordinator.description, "--name", name, "--log-level", pool.logLevel ?? logLevel]
                + settingArguments(pool.settings, ordinal: ordinal))
    }

    /// A pool's settings as command-line options of its worker executable, for the pool's
    /// `ordinal`-th worker (from 1). Settings left nil are not passed (the worker's default
    /// holds); durations go in the unit of their flag (`--latency-ms`, `--connect-timeout-ms`,
    /// `--timeout-ms`, `--keep-stale-seconds`), byte sizes in bytes.
    static func settingArguments(_ settings: Configuration.WorkerSettings, ordinal: Int = 1) -> [String] {
        var arguments: [String] = []
        func add(_ flag: String, _ value: (some CustomStringConvertible)?) {
            if let value { arguments += [flag, value.description] }
        }
        switch settings {
        case .bundle(let bundle):
            add("--root", bundle.root)
            if bundle.latency > .zero { add("--latency-ms", bundle.latency.wholeMilliseconds) }
            add("--max-file-bytes", bundle.maxFileBytes)
            if bundle.serveDotfiles { arguments.append("--serve-dotfiles") }
        case .cache(let cache):
            if let store = cache.store {
                // Redis is one database every worker shares; files are one per worker.
                add("--store", cache.usesRedis ? store : storePath(store, ordinal: ordinal))
            } else {
                arguments.append("--memory-only")
            }
            add("--memory-bytes", cache.memoryBytes)
            add("--keep-stale-seconds", cache.keepStale.map { $0.wholeMilliseconds / 1000 })
            add("--store-timeout-ms", cache.storeTimeout?.wholeMilliseconds)
            add("--store-max-pending", cache.storeMaxPending)
            add("--memory-grace-ms", cache.memoryGrace?.wholeMilliseconds)
        case .network(let network):
            for origin in network.allow { add("--allow", origin) }
            add("--retries", network.retries)
            add("--connect-timeout-ms", network.connectTimeout?.wholeMilliseconds)
            add("--timeout-ms", network.timeout?.wholeMilliseconds)
            add("--max-redirects", network.maxRedirects)
            add("--max-response-bytes", network.maxResponseBytes)
            add("--max-host-connections", network.maxHostConnections)
            add("--capacity", network.capacity)
        }
        return arguments
    }

    /// The store of a pool's `ordinal`-th cache worker: each worker keeps its own file (its
    /// shard), the first the configured one, the others numbered beside it
    /// (`sqlite:run/cache.db` → `sqlite:run/cache-2.db`), so names and files stay paired
    /// across restarts and scaling.
    static func storePath(_ store: String, ordinal: Int) -> String {
        guard ordinal > 1 else { return store }
        let slash = store.lastIndex(of: "/") ?? store.startIndex
        guard let dot = store[slash...].lastIndex(of: "."), dot > store.index(after: slash) else {
            return "\(store)-\(ordinal)"
        }
        return "\(store[..<dot])-\(ordinal)\(store[dot...])"
    }
}
