import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import Logging
import MonarchLoop
import MonarchNetwork
import MonarchWire
import MonarchWorker

/// `monarch-network-worker`: fetches from allowlisted HTTP upstreams for a Monarch coordinator.
@main
struct NetworkWorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monarch-network-worker",
        abstract: "Fetch requests' upstream URLs over HTTP for a Monarch coordinator, as a worker of kind network.",
        discussion: """
            Only http and https upstreams whose HOST:PORT is given with --allow are contacted, redirect targets \
            included; with no --allow nothing is. Exits when the coordinator closes the connection; SIGTERM or \
            SIGINT finishes the requests in flight first.
            """,
        version: MonarchRelease.version
    )

    @OptionGroup var worker: WorkerOptions

    @Option(help: "An upstream that may be contacted, as HOST:PORT ([ADDRESS]:PORT for IPv6). Repeatable.")
    var allow: [String] = []

    @Option(help: "How long connecting to an upstream may take, in milliseconds (capped by each request's deadline).")
    var connectTimeoutMs: UInt64 = 5000

    @Option(help: "How long a request that carries no deadline may take in all, in milliseconds.")
    var timeoutMs: UInt64 = 30000

    @Option(help: "Retries of GET, HEAD, PUT and DELETE after a connection failure or a 502, 503 or 504.")
    var retries: Int = 2

    @Option(help: "Redirects followed per request, at most.")
    var maxRedirects: Int = 5

    @Option(help: ArgumentHelp(
        "The largest response body accepted, in bytes, after decoding; a larger one gets a responseTooLarge failure.",
        discussion: "Also capped by the largest body that fits in a frame the coordinator accepts (its welcome's maxFrameBytes, less 64 KiB, in base64); the default fits the protocol's default 16 MiB frame."))
    var maxResponseBytes: Int = NetworkConfiguration.defaultMaxResponseBytes

    @Option(help: "Connections open to one upstream host at most.")
    var maxHostConnections: Int = 64

    @Option(help: ArgumentHelp(
        "Requests run at once, announced to the coordinator (default: 256).",
        discussion: "The coordinator sends no more than this, and no more than --max-host-connections for any one upstream host (announced too), and queues the rest, taking turns between clients: one client's slow requests to one host never hold up requests to other hosts, nor wait ahead of another client's requests to the same host inside libcurl."))
    var capacity: Int = 256

    func validate() throws {
        guard retries >= 0 else { throw ValidationError("--retries must be 0 or more") }
        guard maxRedirects >= 0 else { throw ValidationError("--max-redirects must be 0 or more") }
        guard maxResponseBytes > 0 else { throw ValidationError("--max-response-bytes must be positive") }
        guard maxHostConnections > 0 else { throw ValidationError("--max-host-connections must be positive") }
        guard capacity > 0 else { throw ValidationError("--capacity must be positive") }
        guard connectTimeoutMs > 0, timeoutMs > 0 else { throw ValidationError("timeouts must be positive") }
    }

    func run() async throws {
        worker.setUpProcess()
        guard CurlLibrary.initialize() else {
            throw ValidationError("libcurl could not be initialised")
        }
        let identity = WorkerIdentity(
            kind: "network", name: worker.name, capacity: capacity, hostCapacity: maxHostConnections,
            token: WorkerIdentity.tokenFromEnvironment)
        let logger = Logger(label: identity.name)
        let address = try worker.coordinatorAddress()
        let allowlist: UpstreamAllowlist
        do {
            allowlist = try UpstreamAllowlist(parsing: allow)
        } catch {
            throw ValidationError("--allow: \(error)")
        }
        let configuration = NetworkConfiguration(
            allowlist: allowlist, connectTimeout: .milliseconds(Int64(clamping: connectTimeoutMs)),
            defaultTimeout: .milliseconds(Int64(clamping: timeoutMs)),
            retry: RetryPolicy(maxRetries: retries), maxRedirects: maxRedirects, maxResponseBytes: maxResponseBytes)
        let loop = try EventLoop(name: "monarch-network-worker")
        defer { _ = loop.shutdown() }
        let options = CurlMulti.Options(maxHostConnections: maxHostConnections)
        let multi = try await loop.submit { try CurlMulti(on: loop, options: options, logger: logger) }
        let provider = NetworkProvider(multi: multi, configuration: configuration, logger: logger)
        let runtime = WorkerRuntime(identity: identity, provider: provider, loop: loop, logger: logger) { limits in
            provider.limitBodies(toFitFrameBodiesOf: limits.maxBodyBytes)
            // Said at info only when the frames lower --max-response-bytes (see the bundle worker).
            let level: Logger.Level = provider.effectiveMaxResponseBytes < maxResponseBytes ? .notice : .debug
            logger.log(level: level, "response bodies accepted up to \(provider.effectiveMaxResponseBytes) bytes (\(limits))")
        }
        if allowlist.origins.isEmpty {
            logger.warning("no --allow given: every upstream will be refused (upstreamNotAllowed)")
        } else {
            logger.info("fetching with \(CurlLibrary.version); \(allowlist)")
        }
        do {
            try await WorkerMain.serve(runtime, coordinator: address, logger: logger)
        } catch {
            await multi.close()
            throw error
        }
        await multi.close()
    }
}
