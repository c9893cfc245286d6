import ArgumentParser
import MonarchClient
import MonarchLoop
import MonarchWire

/// Options of every subcommand that talks to a running coordinator.
struct CoordinatorOptions: ParsableArguments {
    @Option(help: "The coordinator's address: unix:PATH or tcp:HOST:PORT.")
    var address: String?

    @OptionGroup var config: ConfigOptions

    /// `--address`, else `MONARCH_ADDRESS`, else the configuration's first client address.
    func coordinatorAddress() throws -> SocketAddress {
        let text: String
        if let address {
            text = address
        } else if let fromEnvironment = ProcessSetup.environment("MONARCH_ADDRESS") {
            text = fromEnvironment
        } else {
            return try config.loadConfiguration().listen.clients[0]
        }
        do {
            return try SocketAddress(parsing: text)
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// The token to present: `MONARCH_TOKEN`, else the `auth.token` of `--config` (when it
    /// loads); nil when neither gives one.
    func token() -> String? {
        if let fromEnvironment = ProcessSetup.environment("MONARCH_TOKEN") { return fromEnvironment }
        guard config.config != nil else { return nil }
        return try? config.loadConfiguration().token
    }

    /// A connection to the coordinator, with the token of ``token()``.
    ///
    /// - Throws: ``MonarchClientError`` when it cannot be reached (callers exit 2).
    func connect() async throws -> MonarchClient {
        let target = try coordinatorAddress()
        return try await MonarchClient.connect(to: target, token: token())
    }
}
