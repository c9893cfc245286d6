import ArgumentParser
import Monarch
import MonarchClient
import MonarchConfig
import MonarchLoop
import MonarchWire

/// Options of every subcommand that talks to a running coordinator.
struct CoordinatorOptions: ParsableArguments {
    @Option(help: "The coordinator's address: unix:PATH or tcp:HOST:PORT.")
    var address: String?

    @OptionGroup var config: ConfigOptions

    /// `--address`, else `MONARCH_ADDRESS`, else the first client address of the
    /// configuration (`--config`, `./monarch.yml` or the embedded default; see ``ConfigOptions/source``).
    func coordinatorAddress() throws -> SocketAddress {
        let text: String
        if let address {
            text = address
        } else if let fromEnvironment = ProcessSetup.environment("MONARCH_ADDRESS") {
            text = fromEnvironment
        } else {
            let address = try config.loadConfiguration().listen.clients[0]
            // The embedded default's socket is in a runtime folder that may be in /tmp: trust it
            // only if it is this user's alone (another user could have made it first).
            if config.source == .embeddedDefault, case .unix(let path) = address {
                do {
                    try RuntimeDirectory.verify(RuntimeDirectory.folder(containing: path))
                } catch {
                    throw ConfigurationProblem("\(error); not connecting")
                }
            }
            return address
        }
        do {
            return try SocketAddress(parsing: text)
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// The secret to present: `MONARCH_ADMIN_TOKEN`, else `MONARCH_TOKEN`, else the
    /// configuration file's (`--config` or `./monarch.yml`, when it loads) `auth.adminToken` —
    /// whoever reads the file is its admin — else its `auth.token`; nil when none gives one.
    func token() -> String? {
        for name in ["MONARCH_ADMIN_TOKEN", "MONARCH_TOKEN"] {
            if let fromEnvironment = ProcessSetup.environment(name) { return fromEnvironment }
        }
        guard config.source.file != nil, let configuration = try? config.loadConfiguration() else { return nil }
        return configuration.adminToken ?? configuration.token
    }

    /// Where the address comes from, for messages: `--address`, `MONARCH_ADDRESS`, or the
    /// configuration's source.
    var addressSource: String {
        if address != nil { return "--address" }
        if ProcessSetup.environment("MONARCH_ADDRESS") != nil { return "MONARCH_ADDRESS" }
        return config.source.description
    }

    /// ``connect()`` for the subcommand `command`: when the coordinator cannot be reached,
    /// prints why (`monarch COMMAND: …`) and exits 2. A configuration that does not load
    /// (``ConfigurationProblem``, exit 78) or an invalid address (usage, exit 64) is thrown.
    func connectOrExit(as command: String) async throws -> MonarchClient {
        do {
            return try await connect()
        } catch let error as MonarchError {
            printToStandardError("monarch \(command): \(error)")
            throw ExitCode(2)
        }
    }

    /// A connection to the coordinator, with the token of ``token()``.
    ///
    /// - Throws: ``MonarchError`` (`transport`) when it cannot be reached (callers exit 2); its message
    ///   says where the address came from, and, for a configuration's address, where to run.
    func connect() async throws -> MonarchClient {
        let target = try coordinatorAddress()
        let why: String
        do {
            return try await MonarchClient.connect(to: target, options: MonarchClient.Options(token: token()))
        } catch {
            guard case .transport(let transport) = error, transport.kind == .cannotConnect else { throw error }
            why = transport.message
        }
        var hint = " (the address is from \(addressSource)"
        if address == nil, ProcessSetup.environment("MONARCH_ADDRESS") == nil {
            hint += "; is `monarch up` running with it? Run the command from the folder `monarch up` runs in, "
                + "or name the coordinator with --config, --address or MONARCH_ADDRESS"
        }
        throw MonarchError.transport(.init(.cannotConnect, why + hint + ")"))
    }
}
