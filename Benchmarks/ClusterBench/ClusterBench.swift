import ArgumentParser

/// `monarch-bench`: figures for a whole local cluster (the coordinator and real workers).
@main
struct ClusterBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monarch-bench",
        abstract: "Benchmarks of a local Monarch cluster; each prints its figures.",
        subcommands: [CacheHitsCommand.self, NetworkCommand.self]
    )
}
