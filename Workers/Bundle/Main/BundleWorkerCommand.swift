import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import Logging
import MonarchBundle
import MonarchLoop
import MonarchWire
import MonarchWorker

/// `monarch-bundle-worker`: serves a folder's files to a Monarch coordinator.
@main
struct BundleWorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monarch-bundle-worker",
        abstract: "Serve the files under a folder to a Monarch coordinator, as a worker of kind bundle.",
        discussion: "Exits when the coordinator closes the connection; SIGTERM or SIGINT finishes the requests in flight first.",
        version: MonarchRelease.version
    )

    @OptionGroup var worker: WorkerOptions

    @Option(help: "The bundle folder.")
    var root: String

    @Option(help: "Simulated latency in milliseconds before every answer (fixtures that behave like a slow network).")
    var latencyMs: UInt64 = 0

    @Option(help: ArgumentHelp(
        "The largest file served, in bytes; larger files get a responseTooLarge failure.",
        discussion: "Also capped by the largest body that fits in a frame the coordinator accepts (its welcome's maxFrameBytes, less 64 KiB, in base64); the default fits the protocol's default 16 MiB frame."))
    var maxFileBytes: Int = BundleStore.defaultMaxFileBytes

    @Flag(help: "Serve paths with a component starting with \".\" (.env, .git/config); by default they are misses, like files that are not there.")
    var serveDotfiles = false

    func validate() throws {
        guard maxFileBytes >= 0 else { throw ValidationError("--max-file-bytes must be 0 or more") }
    }

    func run() async throws {
        worker.setUpProcess()
        let identity = WorkerIdentity(kind: "bundle", name: worker.name, token: WorkerIdentity.tokenFromEnvironment)
        let logger = Logger(label: identity.name)
        let address = try worker.coordinatorAddress()
        let loop = try EventLoop(name: "monarch-bundle-worker")
        defer { _ = loop.shutdown() }
        let store: BundleStore
        do {
            store = try await BundleStore(root: root, on: loop, maxFileBytes: maxFileBytes, serveDotfiles: serveDotfiles)
        } catch {
            logger.critical("\(error)")
            throw ExitCode.failure
        }
        let runtime = WorkerRuntime(
            identity: identity,
            provider: BundleProvider(store: store, latency: .milliseconds(Int64(clamping: latencyMs))),
            loop: loop, logger: logger
        ) { limits in
            store.limitBodies(toFitFrameBodiesOf: limits.maxBodyBytes)
            // Said at info only when the frames lower --max-file-bytes: startup stays quiet
            // after registering, so `monarch up`'s ready line is its last.
            let level: Logger.Level = store.effectiveMaxFileBytes < maxFileBytes ? .notice : .debug
            logger.log(level: level, "files served up to \(store.effectiveMaxFileBytes) bytes (\(limits))")
        }
        logger.info("serving \(store.root), opening files \(store.resolution)\(serveDotfiles ? ", hidden files included" : "")")
        try await WorkerMain.serve(runtime, coordinator: address, logger: logger)
    }
}
