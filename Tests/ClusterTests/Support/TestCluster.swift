import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Monarch
import MonarchClient
import MonarchWire
import Synchronization

/// A temporary folder under /tmp with a short name, so socket paths stay short; removed by
/// ``remove()``.
struct TemporaryFolder: Sendable {
    let path: String

    init() throws {
        var template = Array("/tmp/mcl.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw SpawnError("mkdtemp failed: errno \(errno)")
        }
        path = String(cString: made)
    }

    /// Writes `bytes` to `relativePath`, creating its folders.
    func write(_ relativePath: String, _ bytes: [UInt8]) throws {
        let url = URL(fileURLWithPath: path + "/" + relativePath)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
    }

    func write(_ relativePath: String, _ text: String) throws {
        try write(relativePath, Array(text.utf8))
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// What a test cluster runs.
struct ClusterOptions: Sendable {
    /// Bundle workers.
    var bundleCount = 1
    /// The bundle's simulated latency (`800ms`), none when nil.
    var latency: String?
    /// Whether the bundle folder exists.
    var createBundle = true
    /// Replaces everything after `listen` (domains, routes, workers, …); `$FOLDER` stands for
    /// the cluster's folder.
    var custom: String?
    /// `auth.token`, when set; the test's clients present it (unless ``adminToken`` is set).
    var token: String?
    /// `auth.adminToken`, when set; the test's clients (``TestCluster/connect(options:)``,
    /// ``TestCluster/status()``) present it.
    var adminToken: String?
    /// `auth.workerToken`, when set.
    var workerToken: String?
    /// A TCP port on 127.0.0.1 the coordinator also listens on for clients, when set.
    var tcpPort: UInt16?
    /// `listen.http`: the HTTP front door's addresses (`tcp:127.0.0.1:0`, `unix:$FOLDER/h.sock`).
    var http: [String] = []
    /// The `monarch` executable to run (its folder is where it finds the workers); the
    /// build's by default.
    var monarch = Executables.monarch

    /// The files of every test bundle.
    static let files: [String: [UInt8]] = [
        "docs/hello.txt": Array("Hello, Monarch!\n".utf8),
        "docs/other.txt": Array("another file\n".utf8),
        "docs/guide/intro.md": Array("# Intro\n\nNested.\n".utf8),
        "docs/data.json": Array(#"{"answer":42}"#.utf8),
        "docs/blob.bin": [0xFF, 0xFE, 0x00, 0x01, 0x80, 0x7F],
        "slow/a.txt": Array("slow a\n".utf8),
    ]

    /// The configuration for a cluster in `folder`.
    func yaml(in folder: String) -> String {
        let secrets = [("token", token), ("adminToken", adminToken), ("workerToken", workerToken)]
            .compactMap { key, value in value.map { "  \(key): \($0)\n" } }
        let auth = secrets.isEmpty ? "" : "auth:\n" + secrets.joined()
        let tcp = tcpPort.map { ", tcp:127.0.0.1:\($0)" } ?? ""
        let http = self.http.isEmpty ? "" : "  http: [\(self.http.joined(separator: ", "))]\n".replacingOccurrences(of: "$FOLDER", with: folder)
        if let custom {
            return """
                listen:
                  clients: [unix:\(folder)/c.sock\(tcp)]
                  workers: unix:\(folder)/w.sock

                """ + http + auth + custom.replacingOccurrences(of: "$FOLDER", with: folder)
        }
        var bundle = "{count: \(bundleCount), root: Bundle"
        if let latency { bundle += ", latency: \(latency)" }
        bundle += "}"
        return """
            listen:
              clients: [unix:\(folder)/c.sock\(tcp)]
              workers: unix:\(folder)/w.sock

            """ + http + """
            domains:
              static: [bundle]
            routes:
              - match: "docs/..."
                domain: static
              - match: "slow/..."
                domain: static
                timeout: 300ms
            workers:
              bundle: \(bundle)

            """ + auth
    }
}

/// One registered worker, as a status report shows it.
struct WorkerStatus: Sendable, Equatable {
    var id: String
    var kind: String
    var pid: Int32
    var name: String?
    var inFlight: Int
    var forwarded: Int
    var answered: Int
}

/// A coordinator's status report, with shorthands for the tests.
struct ClusterStatus: Sendable {
    /// The typed report.
    var typed: StatusReport
    /// The registered workers (not the local ones starting or restarting).
    var workers: [WorkerStatus]
    var tripsStarted: Int { typed.tripsStarted }
    var tripsJoined: Int { typed.tripsJoined }
    var requestsInFlight: Int { typed.requestsInFlight }
    var clients: Int { typed.clients }
    var draining: Bool { typed.draining }
    /// Write-backs cache workers acknowledged.
    var writeBacks: Int { typed.writeBacks }
    /// Background refreshes started (`cacheThenRefresh`).
    var refreshesStarted: Int { typed.refreshesStarted }
    /// The whole report as JSON, for the counters not named above.
    var report: [String: JSONValue]

    /// The integer counter `key` of the report; nil when absent.
    func counter(_ key: String) -> Int? {
        if case .integer(let value)? = report[key] { Int(value) } else { nil }
    }

    init(_ typed: StatusReport) {
        self.typed = typed
        self.report = ResultMessage(id: 0, report: typed).data ?? [:]
        workers = typed.workers.filter { [.ready, .draining, .unresponsive].contains($0.state) }.map { worker in
            WorkerStatus(
                id: worker.id, kind: worker.kind, pid: Int32(worker.pid ?? 0), name: worker.name, inFlight: worker.inFlight,
                forwarded: worker.forwarded, answered: worker.answered)
        }
    }

    var bundleWorkers: [WorkerStatus] { workers.filter { $0.kind == "bundle" } }
    /// The workers of `kind`.
    func workers(_ kind: String) -> [WorkerStatus] { workers.filter { $0.kind == kind } }
    var forwarded: Int { bundleWorkers.reduce(0) { $0 + $1.forwarded } }
    var inFlight: Int { bundleWorkers.reduce(0) { $0 + $1.inFlight } }
}

/// A `monarch up` in a temporary folder, with its bundle; ``destroy()`` leaves nothing behind.
final class TestCluster: Sendable {
    let folder: TemporaryFolder
    let up: Spawned
    /// The token clients present, if the cluster asks for one.
    let token: String?
    /// Every worker pid seen in a status report, killed by ``destroy()`` if still there.
    private let workerPids = Mutex<Set<Int32>>([])

    var clientAddress: SocketAddress { .unix(path: folder.path + "/c.sock") }
    var workerAddress: SocketAddress { .unix(path: folder.path + "/w.sock") }
    var configPath: String { folder.path + "/monarch.yml" }

    private init(folder: TemporaryFolder, up: Spawned, token: String?) {
        self.folder = folder
        self.up = up
        self.token = token
    }

    /// Starts `monarch up` and waits for its ready line.
    static func start(_ options: ClusterOptions = ClusterOptions()) async throws -> TestCluster {
        let folder = try TemporaryFolder()
        do {
            if options.createBundle {
                for (path, bytes) in ClusterOptions.files { try folder.write("Bundle/" + path, bytes) }
            }
            try folder.write("monarch.yml", options.yaml(in: folder.path))
            let up = try Spawned(options.monarch, ["up", "--config", folder.path + "/monarch.yml"])
            let cluster = TestCluster(folder: folder, up: up, token: options.adminToken ?? options.token)
            do {
                _ = try await up.waitForOutput(containing: "ready")
                _ = try await cluster.status()
            } catch {
                cluster.destroy()
                throw SpawnError("\(error)\nmonarch up (running: \(up.isRunning)) said:\n\(up.stderr.text)")
            }
            return cluster
        } catch {
            folder.remove()
            throw error
        }
    }

    /// Runs `body` with a fresh cluster, destroyed afterwards whatever happens.
    static func with<T: Sendable>(
        _ options: ClusterOptions = ClusterOptions(), _ body: (TestCluster) async throws -> T
    ) async throws -> T {
        try await ClusterGate.inTurn {
            let cluster = try await start(options)
            defer { cluster.destroy() }
            return try await body(cluster)
        }
    }

    /// A new client connection (closed by the caller), with `options` and the cluster's token.
    func connect(options: MonarchClient.Options = MonarchClient.Options()) async throws -> MonarchClient {
        var options = options
        options.token = token
        // A full run on 2 cores can hold a handshake up for seconds: more than the library's 5 s.
        options.connectTimeout = max(options.connectTimeout, .seconds(30))
        let (address, given) = (clientAddress, options)
        return try await within(40, "connecting to \(address)") { try await MonarchClient.connect(to: address, options: given) }
    }

    /// Runs `body` with a new client connection (``connect(options:)``), and closes it
    /// afterwards, whether `body` returns or throws.
    func withClient<T>(
        options: MonarchClient.Options = MonarchClient.Options(), _ body: (MonarchClient) async throws -> T
    ) async throws -> T {
        let client = try await connect(options: options)
        do {
            let result = try await body(client)
            await client.close()
            return result
        } catch {
            await client.close()
            throw error
        }
    }

    /// The status report, over a connection of its own.
    func status() async throws -> ClusterStatus {
        try await withClient { client in try await status(via: client) }
    }

    /// The status report, over `client`.
    func status(via client: MonarchClient) async throws -> ClusterStatus {
        let status = ClusterStatus(try await within(20, "status") { try await client.status() })
        workerPids.withLock { $0.formUnion(status.workers.map(\.pid)) }
        return status
    }

    /// Worker pids seen so far.
    var seenWorkerPids: Set<Int32> { workerPids.withLock { $0 } }

    /// Kills `monarch up` and every worker seen, removes the folder.
    func destroy() {
        up.signal(SIGKILL)
        for pid in seenWorkerPids where isMonarchWorker(pid) { kill(pid, SIGKILL) }
        folder.remove()
    }
}

/// The response to `request`, or the chain error the coordinator gave instead.
func perform(
    _ client: MonarchClient, _ request: Request, timeout: Double = 30
) async throws -> Result<Response, ChainError> {
    try await within(timeout, "an answer to \(request.path)") {
        switch await outcome(client, request) {
        case .success(let response): return .success(response)
        case .failure(let error):
            guard let chain = error.chainError else { throw error }
            return .failure(chain)
        }
    }
}

/// The response to `request`, or the client's error; no timeout (use in a task).
func outcome(_ client: MonarchClient, _ request: Request) async -> Result<Response, MonarchError> {
    do throws(MonarchError) {
        return .success(try await client.perform(request))
    } catch {
        return .failure(error)
    }
}

extension Result {
    /// The success, or nil.
    var success: Success? { if case .success(let value) = self { value } else { nil } }
    /// The failure, or nil.
    var failure: Failure? { if case .failure(let error) = self { error } else { nil } }
}
