import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
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
            BenchCommand.self, WatchCommand.self, CheckCommand.self, PingCommand.self,
        ]
    )

    /// Runs the command line; a ``ConfigurationProblem`` is printed alone and exits 78
    /// (`EX_CONFIG`) in every command, any other error as ArgumentParser reports it.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let problem as ConfigurationProblem {
            printToStandardError("monarch: \(problem)")
            Glibc.exit(ConfigurationProblem.exitStatus)
        } catch {
            exit(withError: error)
        }
    }
}
