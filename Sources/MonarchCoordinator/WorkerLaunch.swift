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
    /// `coordinator` and logging at `logLevel`.
    static func launch(
        for pool: Configuration.WorkerPool, ordinal: Int, coordinator: SocketAddress, executableDirectory: String,
        logLevel: String
    ) -> WorkerLaunch {
        let name = "\(pool.kind)-\(ordinal)"
        return WorkerLaunch(
            kind: pool.kind, ordinal: ordinal, name: name, executable: executable(of: pool.kind, in: executableDirectory),
            arguments: ["--coordinator", coordinator.description, "--name", name, "--log-level", logLevel]
                + settingArguments(pool.settings, ordinal: ordinal))
    }

    /// A pool's settings as command-line options of its worker executable, for the pool's
    /// `ordinal`-th worker (from 1).
    static func settingArguments(_ settings: Configuration.WorkerSettings, ordinal: Int = 1) -> [String] {
        switch settings {
        case .bundle(let root, let latency):
            var arguments = ["--root", root]
            if latency > .zero { arguments += ["--latency-ms", String(latency.wholeMilliseconds)] }
            return arguments
        case .cache(let store, let memoryBytes):
            var arguments = store.map { ["--store", storePath($0, ordinal: ordinal)] } ?? ["--memory-only"]
            if let memoryBytes { arguments += ["--memory-bytes", String(memoryBytes)] }
            return arguments
        case .network(let allow):
            return allow.flatMap { ["--allow", $0] }
        }
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
