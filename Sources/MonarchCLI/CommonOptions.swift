import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging
import MonarchConfig
import MonarchLoop
import MonarchWire

/// Where a command's configuration comes from, in the order it is looked for.
enum ConfigSource: Equatable {
    /// `--config FILE`.
    case option(String)
    /// `monarch.yml` in the working directory (no `--config` given).
    case workingDirectory(String)
    /// The embedded default, its relative paths taken from the working directory (no
    /// `--config`, no `./monarch.yml`).
    case embeddedDefault

    /// The name of the file a configuration is read from when no `--config` is given.
    static let fileName = "monarch.yml"

    /// How it is named to the user: `--config x.yml`, `./monarch.yml`, `the embedded default configuration`.
    var description: String {
        switch self {
        case .option(let path): "--config \(path)"
        case .workingDirectory: "./\(Self.fileName)"
        case .embeddedDefault: "the embedded default configuration"
        }
    }

    /// The file read, if any.
    var file: String? {
        switch self {
        case .option(let path), .workingDirectory(let path): path
        case .embeddedDefault: nil
        }
    }
}

/// Options every subcommand that reads the configuration shares.
struct ConfigOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The configuration file.",
        discussion: "Default: monarch.yml in the working directory when there is one, else the embedded default configuration (Examples/monarch.yml explains it), whose relative paths are taken from the working directory."))
    var config: String?

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    @Option(name: .long, help: ArgumentHelp(
        "Log lines as text or json (one object per line, for log shippers).",
        discussion: "Default: MONARCH_LOG_FORMAT, else text. The workers monarch up starts log the same way."))
    var logFormat: ProcessSetup.LogFormat?

    /// Where the configuration comes from: `--config`, else `./monarch.yml` when it exists,
    /// else the embedded default.
    var source: ConfigSource {
        if let config { return .option(config) }
        let local = currentDirectory() + "/" + ConfigSource.fileName
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: local, isDirectory: &isDirectory), !isDirectory.boolValue {
            return .workingDirectory(local)
        }
        return .embeddedDefault
    }

    /// The configuration of ``source``: the file's contents, or the embedded default (relative
    /// paths against the working directory).
    ///
    /// - Throws: ``ConfigurationProblem`` when the file cannot be read or is invalid.
    func loadConfiguration() throws(ConfigurationProblem) -> Configuration {
        do {
            guard let file = source.file else { return try Configuration.defaultConfiguration(baseDirectory: currentDirectory()) }
            return try Configuration.load(file: file)
        } catch {
            throw ConfigurationProblem("\(error)")
        }
    }

    /// Sets the process up (logs to standard error at the chosen level and format, SIGPIPE
    /// ignored). A `--log-format` is passed on to the processes this one starts.
    func startProcess() -> Logger {
        if let logFormat { setenv(ProcessSetup.LogFormat.environmentVariable, logFormat.rawValue, 1) }
        ProcessSetup.start(logLevel: logLevel, format: logFormat ?? .fromEnvironment)
        return Logger(label: "monarch")
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
extension ProcessSetup.LogFormat: ExpressibleByArgument {}

/// The process's working directory.
func currentDirectory() -> String {
    guard let path = getcwd(nil, 0) else { return "." }
    defer { free(path) }
    return String(cString: path)
}
