import ArgumentParser
import Foundation
import MonarchConfig
import MonarchCoordinator
import MonarchLoop

/// `monarch check`: validates a configuration without starting anything.
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check the configuration without starting anything (like nginx -t).",
        discussion: """
            Reads the configuration monarch up would (--config FILE, else ./monarch.yml, else the \
            embedded default), and checks what running it needs besides: route patterns and \
            upstream templates, bundle folders, worker executables. Prints a summary and exits 0; \
            prints every problem and exits 78 when there is one. --print writes the configuration \
            used as YAML (the embedded default's text, or the file's).
            """
    )

    @Flag(help: "Print the configuration's text (for the embedded default: what it means here).")
    var print = false

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let source = options.source
        let configuration = try options.loadConfiguration()
        let problems = ConfigurationCheck.problems(in: configuration, executableDirectory: ProcessSetup.executableDirectory)
        guard problems.isEmpty else {
            throw ConfigurationProblem("\(source.description): " + problems.joined(separator: "; "))
        }
        if print {
            writeAll(Array(try Self.text(of: source).utf8), to: 1)
            return
        }
        Swift.print(Self.summary(of: configuration, from: source))
    }

    /// One paragraph saying what `configuration` runs and where it listens, with who may
    /// purge through the HTTP front door (`http.purgeFrom`).
    static func summary(of configuration: Configuration, from source: ConfigSource) -> String {
        let pools = configuration.workers.map { "\($0.kind)×\($0.count)" }.joined(separator: ", ")
        let domains = configuration.domains.map { "\($0.name) → \($0.providers.joined(separator: ", "))" }
        let http = configuration.listen.http.map(\.description).joined(separator: ", ")
        let purgeFrom = configuration.http.purgeFrom
        let purge = http.isEmpty ? (purgeFrom.isEmpty ? "" : "; http.purgeFrom applies to no listener (listen.http is not set)")
            : purgeFrom.isEmpty ? "; PURGE from nobody (http.purgeFrom)"
            : "; PURGE from " + purgeFrom.map(\.description).joined(separator: ", ")
        return """
            \(source.file ?? source.description): OK
              clients: \(configuration.listen.clients.map(\.description).joined(separator: ", "))
              http: \(http.isEmpty ? "none" : http)\(purge)
              workers: \(configuration.listen.workers)
              routes: \(configuration.routes.count); domains: \(domains.joined(separator: "; "))
              pools: \(pools.isEmpty ? "none" : pools)
            """
    }

    private static func text(of source: ConfigSource) throws(ConfigurationProblem) -> String {
        guard let file = source.file else {
            let folder = currentDirectory()
            let environment = ProcessInfo.processInfo.environment
            return Configuration.defaultYAML(
                runtimeDirectory: RuntimeDirectory.path(forWorkingDirectory: folder, environment: environment),
                http: Configuration.defaultHTTP(environment: environment))
        }
        guard let bytes = FileManager.default.contents(atPath: file) else { throw ConfigurationProblem("\(file): cannot be read") }
        return String(decoding: bytes, as: UTF8.self)
    }
}
