import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MonarchConfig
import MonarchCoordinator
import MonarchLoop

/// `monarch up`: the coordinator and its workers in the foreground.
struct UpCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "up",
        abstract: "Launch the cluster in the foreground: the coordinator and the configured workers.",
        discussion: """
            The configuration is --config FILE, else monarch.yml in the working directory, else \
            the embedded default, which serves the working directory's files (its sockets are in \
            a runtime folder of the working directory's own; monarch check --print shows it). \
            Prints a line containing "ready" once every configured worker has registered, after \
            the startup log lines. \
            Signals: SIGINT or SIGTERM drains the requests in flight, then stops every worker; a \
            second one stops at once. SIGHUP reloads the configuration file. \
            Exits 78 when the configuration cannot be used, 1 when a cluster already runs on its \
            sockets or the cluster fails.
            """
    )

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let source = options.source
        let configuration = try options.loadConfiguration()
        if source == .embeddedDefault, case .unix(let path) = configuration.listen.workers {
            do {
                try RuntimeDirectory.prepare(RuntimeDirectory.folder(containing: path))
            } catch {
                throw ConfigurationProblem("\(error)")
            }
        }
        let problems = ConfigurationCheck.problems(
            in: configuration, executableDirectory: ProcessSetup.executableDirectory)
        guard problems.isEmpty else {
            throw ConfigurationProblem("\(source.description): " + problems.joined(separator: "; "))
        }
        let lock: ClusterLock?
        do {
            lock = try ClusterLock.acquire(for: configuration)
        } catch {
            printToStandardError("monarch up: \(error)")
            throw ExitCode.failure
        }
        if source == .embeddedDefault {
            print(Self.describeDefault(configuration, in: currentDirectory()))
            flushStandardOutput()
        }
        let logger = options.startProcess()
        FreedMemory.returnPeriodically()
        logger.info("configuration: \(source.file ?? source.description)")
        // A reload reads the same source again: the same file, or the embedded default here
        // (never a monarch.yml that appeared since, nor the default when the file went away).
        let folder = currentDirectory()
        let cluster = LocalCluster(
            configuration: configuration, executableDirectory: ProcessSetup.executableDirectory, logger: logger,
            reread: { () throws -> Configuration in
                guard let file = source.file else { return try Configuration.defaultConfiguration(baseDirectory: folder) }
                return try Configuration.load(file: file)
            },
            environment: ProcessInfo.processInfo.environment)
        do {
            try await cluster.run()
        } catch {
            logger.critical("\(error)")
            throw ExitCode.failure
        }
        lock?.release()
    }

    /// What the embedded default serves from `folder`, and where HTTP and clients find it.
    static func describeDefault(_ configuration: Configuration, in folder: String) -> String {
        let http = configuration.listen.http.map { address in
            if case .tcp(let host, let port) = address, port != 0 {
                return "http://\(host.contains(":") ? "[\(host)]" : host):\(port)/"
            }
            return address.description
        }
        let over = http.isEmpty ? "" : "over HTTP on \(http.joined(separator: ", ")) and to clients, "
        return """
            monarch up: no \(ConfigSource.fileName) in \(folder), so the embedded default: every path is a file \
            of this folder (dotfiles refused), \(over)and api/... is fetched from \
            http://\(Configuration.exampleOrigin)/... through a memory cache. Clients connect at \
            \(configuration.listen.clients.map(\.description).joined(separator: ", ")) (monarch get PATH run in \
            this folder finds it).
            """
    }
}
