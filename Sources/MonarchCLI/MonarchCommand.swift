import ArgumentParser
import MonarchWire

/// `monarch`: runs and queries a Monarch cluster.
@main
struct MonarchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monarch",
        abstract: "Request-based resource fetching: run a cluster and ask it for resources.",
        version: MonarchRelease.version,
        subcommands: [
            UpCommand.self, GetCommand.self, InvalidateCommand.self, ScaleCommand.self, StatusCommand.self,
            BenchCommand.self, WatchCommand.self,
        ]
    )
}
