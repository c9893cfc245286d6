import ArgumentParser
import MonarchClient
import MonarchWire

/// `monarch scale`: grows and shrinks the cluster's local worker pools.
struct ScaleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scale",
        abstract: "Run N local workers of a kind: scale network=4 cache=2.",
        discussion: """
            Growing returns once the new workers have registered; shrinking drains the workers \
            that go (they take no new requests and finish what they have) and returns once they \
            have exited. Workers start a few at a time (limits.workerStarts), and a pool never \
            has fewer workers serving than the smaller of its old and new sizes while it changes. \
            A later scale of the same pool (from anywhere) replaces this one's size: this one then \
            returns when the pool reaches the later size, and says so ("asked for N; a later \
            scale replaced it"). Workers that dialled in from elsewhere (containers, other hosts) \
            are not the coordinator's to start or stop: they are counted apart. Scaling a failed \
            pool starts it afresh. Exits 1 when a pool could not be scaled, 2 when the \
            coordinator cannot be reached.
            """
    )

    @Argument(help: "KIND=N pairs, such as network=4.")
    var pools: [String]

    @OptionGroup var coordinator: CoordinatorOptions

    /// The pairs, parsed.
    func targets() throws -> [(kind: String, count: Int)] {
        try pools.map { pair in
            let parts = pair.split(separator: "=", omittingEmptySubsequences: false)
            guard parts.count == 2, WireProtocol.isValidKind(String(parts[0])), let count = Int(parts[1]), count >= 0 else {
                throw ValidationError("expected KIND=N with N ≥ 0, such as network=4; got \"\(pair)\"")
            }
            return (String(parts[0]), count)
        }
    }

    func validate() throws {
        guard !pools.isEmpty else { throw ValidationError("give at least one KIND=N") }
        _ = try targets()
    }

    func run() async throws {
        _ = coordinator.config.startProcess()
        let targets = try targets()
        let client = try await coordinator.connectOrExit(as: "scale")
        var failed = false
        for target in targets {
            do {
                let report = try await client.scale(target.kind, to: target.count)
                print(Self.describe(report))
            } catch {
                printToStandardError("monarch scale: \(target.kind): \(error)")
                if case .transport = error {
                    await client.close()
                    throw ExitCode(2)
                }
                failed = true
            }
        }
        await client.close()
        if failed { throw ExitCode.failure }
    }

    /// One line saying what a scale did, and where a later scale replaced its size.
    static func describe(_ report: ScaleReport) -> String {
        var line = "\(report.kind): \(report.previous) → \(report.count)"
        if report.superseded == true {
            line += " (asked for \(report.requested.map(String.init) ?? "another size"); a later scale replaced it)"
        }
        if !report.started.isEmpty { line += "; started \(report.started.joined(separator: ", "))" }
        if !report.stopped.isEmpty { line += "; drained and stopped \(report.stopped.joined(separator: ", "))" }
        if report.remote > 0 {
            line += "; \(report.remote) remote \(report.kind) worker\(report.remote == 1 ? " is" : "s are") not the coordinator's to start or stop"
        }
        return line
    }
}
