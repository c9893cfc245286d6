import ArgumentParser
import Logging
import MonarchLoop
import MonarchWire

/// The options every worker executable takes: the coordinator's worker address, the worker's
/// name and its log level (`docs/workers.md`).
public struct WorkerOptions: ParsableArguments, Sendable {
    @Option(help: "The coordinator's worker address: unix:PATH or tcp:HOST:PORT.")
    public var coordinator: String

    @Option(help: "The worker's name in logs and status reports, unique in its pool (default: KIND@HOSTNAME).")
    public var name: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    public var logLevel: String = "info"

    public init() {}

    /// Refuses a coordinator address that does not parse and an unknown log level, naming the
    /// option.
    public func validate() throws {
        _ = try coordinatorAddress()
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level: \"\(logLevel)\" is none of trace, debug, info, notice, warning, error, critical")
        }
    }

    /// The coordinator's worker address.
    ///
    /// - Throws: `ValidationError` naming `--coordinator` when it does not parse.
    public func coordinatorAddress() throws -> SocketAddress {
        do {
            return try SocketAddress(parsing: coordinator)
        } catch {
            throw ValidationError("--coordinator: \(error)")
        }
    }

    /// Sets the process up as every worker runs: logs at the level asked for (in the format the
    /// environment asks for), a broken pipe an error rather than the end, and freed memory given
    /// back to the system now and then.
    public func setUpProcess() {
        ProcessSetup.start(logLevel: Logger.Level(rawValue: logLevel) ?? .info)
        FreedMemory.returnPeriodically()
    }
}
