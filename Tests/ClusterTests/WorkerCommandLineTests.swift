import Testing

/// The options every worker executable shares (`WorkerOptions`): checked before anything
/// starts, each refusal naming its option (exit 64).
@Suite("Worker command lines")
struct WorkerCommandLineTests {
    @Test("Every worker refuses a coordinator address that does not parse and an unknown log level, naming the option (exit 64)")
    func sharedOptionsAreChecked() async throws {
        let workers: [(String, [String])] = [
            (Executables.bundleWorker, ["--root", "/tmp"]),
            (Executables.cacheWorker, ["--memory-only"]),
            (Executables.networkWorker, []),
        ]
        for (executable, own) in workers {
            let badAddress = try await Spawned.run(executable, ["--coordinator", "nowhere"] + own)
            #expect(badAddress.status == 64, "\(executable): \(badAddress.stderr)")
            #expect(badAddress.stderr.contains("--coordinator: invalid address \"nowhere\""), "\(executable): \(badAddress.stderr)")

            let badLevel = try await Spawned.run(executable, ["--coordinator", "unix:/nonexistent.sock", "--log-level", "loud"] + own)
            #expect(badLevel.status == 64, "\(executable): \(badLevel.stderr)")
            #expect(badLevel.stderr.contains("--log-level: \"loud\" is none of"), "\(executable): \(badLevel.stderr)")
        }
    }
}
