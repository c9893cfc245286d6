import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import Logging
import MonarchConfig
import MonarchLoop
import MonarchWire

/// Options every subcommand that reads the configuration shares.
struct ConfigOptions: ParsableArguments {
    @Option(name: .long, help: "The configuration file (default: the embedded default configuration).")
    var config: String?

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    /// The configuration file's contents, or the embedded default (relative paths against the
    /// current directory).
    func loadConfiguration() throws -> Configuration {
        guard let config else { return Configuration.defaultConfiguration(baseDirectory: currentDirectory()) }
        do {
            return try Configuration.load(file: config)
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// Sets the process up (logs to standard error at the chosen level, SIGPIPE ignored).
    func startProcess() -> Logger {
        ProcessSetup.start(logLevel: logLevel)
        return Logger(label: "monarch")
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// The process's working directory.
func currentDirectory() -> String {
    guard let path = getcwd(nil, 0) else { return "." }
    defer { free(path) }
    return String(cString: path)
}
