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
            the embedded default (Examples/monarch.yml explains it). \
            Prints a line containing "ready" once every configured worker has registered, after \
            the startup log lines. \
            SIGINT or SIGTERM drains the requests in flight, then stops every worker; a second \
            signal stops at once.
            """
    )

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let source = options.source
        let configuration = try options.loadConfiguration()
        if source == .embeddedDefault, let missing = Self.missingBundleFolder(configuration) {
            printToStandardError("""
                monarch up: there is no \(ConfigSource.fileName) in \(currentDirectory()), and the embedded default \
                configuration serves the folder Bundle from the working directory, which is not there (\(missing)). \
                Run monarch up where a \(ConfigSource.fileName) is (in Monarch's repository: cd Examples), or give --config FILE.
                """)
            throw ExitCode.failure
        }
        let logger = options.startProcess()
        FreedMemory.returnPeriodically()
        logger.info("configuration: \(source.file ?? source.description)")
        let cluster = LocalCluster(
            configuration: configuration, executableDirectory: ProcessSetup.executableDirectory, logger: logger)
        do {
            try await cluster.run()
        } catch {
            logger.critical("\(error)")
            throw ExitCode.failure
        }
    }

    /// The bundle folder `configuration` has local bundle workers serve, when it does not exist.
    static func missingBundleFolder(_ configuration: Configuration) -> String? {
        for pool in configuration.workers where pool.count > 0 {
            guard case .bundle(let bundle) = pool.settings else { continue }
            var isDirectory: ObjCBool = false
            if !FileManager.default.fileExists(atPath: bundle.root, isDirectory: &isDirectory) || !isDirectory.boolValue {
                return bundle.root
            }
        }
        return nil
    }
}
