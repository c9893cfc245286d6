import ArgumentParser
import Monarch
import MonarchClient
import MonarchWire

/// `monarch ping`: is the coordinator there, how far away, which release, up how long.
struct PingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ping",
        abstract: "Check that the coordinator answers: round trip, its release and uptime.",
        discussion: """
            Connects as every command does (--address, MONARCH_ADDRESS, else the configuration's \
            first client address), sends a ping and prints one line: \
            "PONG from ADDRESS in 0.21 ms — monarch 0.9.0, up 3m 12s". Exits 0 on a pong, 2 when \
            the coordinator cannot be reached or does not answer within --deadline (any client may ping).
            """
    )

    @Option(help: "How long to wait for the pong, such as 500ms or 5s.")
    var deadline = "5s"

    @OptionGroup var coordinator: CoordinatorOptions

    func run() async throws {
        _ = coordinator.config.startProcess()
        guard let limit = parseDuration(deadline), limit > .zero else {
            throw ValidationError("--deadline: expected a duration such as 500ms or 5s, got \"\(deadline)\"")
        }
        let address = try coordinator.coordinatorAddress()
        let client = try await coordinator.connectOrExit(as: "ping")
        let ping: CoordinatorPing
        do {
            ping = try await client.ping(deadline: limit)
        } catch {
            await client.close()
            printToStandardError("monarch ping: \(error)")
            throw ExitCode(2)
        }
        await client.close()
        let roundTrip = Double(ping.roundTrip.components.seconds) * 1000 + Double(ping.roundTrip.components.attoseconds) / 1e15
        var line = "PONG from \(address) in \(StatusTable.milliseconds(roundTrip))"
        if let release = ping.release { line += " — monarch \(release)" }
        if let uptime = ping.uptime {
            line += (ping.release == nil ? " — " : ", ") + "up " + StatusTable.duration(Int(uptime.wholeMilliseconds))
        }
        print(line)
    }
}
