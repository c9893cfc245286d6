import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MonarchClient
import MonarchWire

/// `monarch status`: what the cluster is doing.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show pools, workers, counters and the last minute per domain.",
        discussion: """
            --json prints the report as one JSON object (its schema is \
            Protocols/schemas/status-report.schema.json); --watch redraws it every second until \
            Ctrl-C (with --json: one object per line). Exits 2 when the coordinator cannot be reached.
            """
    )

    @Flag(help: "Print the report as JSON.")
    var json = false

    @Flag(help: "Redraw every second until interrupted.")
    var watch = false

    @OptionGroup var coordinator: CoordinatorOptions

    func run() async throws {
        _ = coordinator.config.startProcess()
        let client = try await coordinator.connectOrExit(as: "status")
        repeat {
            let report: StatusReport
            do {
                report = try await client.status()
            } catch {
                printToStandardError("monarch status: \(error)")
                await client.close()
                throw ExitCode(2)
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                writeAll(Array((try encoder.encode(report)) + [UInt8(ascii: "\n")]), to: 1)
            } else {
                // Home, then clear: each frame replaces the last one.
                let clear = watch ? "\u{1B}[H\u{1B}[2J" : ""
                writeAll(Array((clear + StatusTable.render(report)).utf8), to: 1)
            }
            if watch { try await Task.sleep(for: .seconds(1)) }
        } while watch
        await client.close()
    }
}
