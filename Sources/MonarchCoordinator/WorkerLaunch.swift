import Monarch
import MonarchConfig
import MonarchWire

/// How to start one local worker process: which executable, with which arguments.
struct WorkerLaunch: Sendable, Equatable {
    /// The worker's kind.
    var kind: String
    /// Its name, shown in `ps` and status reports (`bundle-1`).
    var name: String
    /// The executable's path.
    var executable: String
    /// The arguments after the executable.
    var arguments: [String]

    /// The executable of a worker kind: `monarch-KIND-worker` in `directory`.
    static func executable(of kind: String, in directory: String) -> String {
        "\(directory)/monarch-\(kind)-worker"
    }

    /// The launches for every worker `configuration` asks for, dialling in to `coordinator` and
    /// logging at `logLevel`.
    static func all(
        for configuration: Configuration, coordinator: SocketAddress, executableDirectory: String, logLevel: String
    ) -> [WorkerLaunch] {
        configuration.workers.flatMap { pool in
            (1...max(pool.count, 1)).prefix(pool.count).map { index in
                let name = "\(pool.kind)-\(index)"
                return WorkerLaunch(
                    kind: pool.kind, name: name, executable: executable(of: pool.kind, in: executableDirectory),
                    arguments: ["--coordinator", coordinator.description, "--name", name, "--log-level", logLevel]
                        + settingArguments(pool.settings))
            }
        }
    }

    /// A pool's settings as command-line options of its worker executable.
    static func settingArguments(_ settings: Configuration.WorkerSettings) -> [String] {
        switch settings {
        case .bundle(let root, let latency):
            var arguments = ["--root", root]
            if latency > .zero { arguments += ["--latency-ms", String(latency.wholeMilliseconds)] }
            return arguments
        case .cache(let store, let memoryBytes):
            var arguments: [String] = []
            if let store { arguments += ["--store", store] }
            if let memoryBytes { arguments += ["--memory-bytes", String(memoryBytes)] }
            return arguments
        case .network(let allow):
            return allow.flatMap { ["--allow", $0] }
        }
    }
}
