import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import MonarchCoordinator
import MonarchLoop

/// `monarch up`: the coordinator and its workers in the foreground.
struct UpCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "up",
        abstract: "Launch the cluster in the foreground: the coordinator and the configured workers.",
        discussion: """
            Prints a line containing "ready" once every configured worker has registered. \
            SIGINT or SIGTERM drains the requests in flight, then stops every worker; a second \
            signal stops at once.
            """
    )

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let configuration = try options.loadConfiguration()
        let logger = options.startProcess()
        let cluster = LocalCluster(
            configuration: configuration, executableDirectory: ProcessSetup.executableDirectory, logger: logger)
        do {
            try await cluster.run()
        } catch {
            logger.critical("\(error)")
            throw ExitCode.failure
        }
    }
}
