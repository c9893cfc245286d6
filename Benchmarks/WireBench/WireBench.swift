import ArgumentParser

/// Frame round trips between two processes on the Swift libuv layer, beside the same
/// exchange between two processes of a minimal C program on libuv (the baseline).
@main
struct WireBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monarch-wire-bench",
        abstract: "Measure frame round trips per second: Swift layer against a C libuv baseline.",
        subcommands: [CompareCommand.self, ServerCommand.self, ClientCommand.self],
        defaultSubcommand: CompareCommand.self
    )
}
