import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import Logging
import MonarchCache
import MonarchConfig
import MonarchLoop
import MonarchWire
import MonarchWorker

/// `monarch-cache-worker`: keeps responses for a Monarch coordinator, in memory in front of an
/// SQLite file (or in memory only).
@main
struct CacheWorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monarch-cache-worker",
        abstract: "Keep responses for a Monarch coordinator, as a worker of kind cache: a bounded LRU in memory in front of an SQLite file.",
        discussion: """
            Give exactly one of --store sqlite:PATH (entries survive restarts; an acknowledged store is on disk) \
            and --memory-only. Exits when the coordinator closes the connection; SIGTERM or SIGINT finishes the \
            requests in flight first.
            """
    )

    @Option(help: "The coordinator's worker address: unix:PATH or tcp:HOST:PORT.")
    var coordinator: String

    @Option(help: "The worker's name in logs and status reports, unique in its pool: the coordinator shards keys on it (default: cache@HOSTNAME).")
    var name: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    @Option(help: "The SQLite file behind memory, as sqlite:PATH (its folder is created when missing, 0700; the file and its -wal and -shm are 0600).")
    var store: String?

    @Flag(help: "Keep entries in memory only; they are lost when the worker stops.")
    var memoryOnly = false

    @Option(help: "The memory budget for entries: bytes, or with a unit (512KB, 64MB, 1GB).")
    var memoryBytes: String = "64MB"

    @Option(help: "How long an expired entry is kept for stale answers before it is swept, in seconds.")
    var keepStaleSeconds: UInt64 = 86_400

    /// The file's path from `--store`, or nil with `--memory-only`.
    private var storePath: String? {
        get throws {
            switch (store, memoryOnly) {
            case (nil, false): throw ValidationError("give --store sqlite:PATH, or --memory-only")
            case (_?, true): throw ValidationError("give either --store or --memory-only, not both")
            case (nil, true): return nil
            case (let store?, false):
                guard store.hasPrefix("sqlite:"), store.count > "sqlite:".count else {
                    throw ValidationError("--store: expected sqlite:PATH, got \"\(store)\"")
                }
                return String(store.dropFirst("sqlite:".count))
            }
        }
    }

    /// The memory budget in bytes from `--memory-bytes`.
    private var budget: Int {
        get throws {
            guard let bytes = parseByteSize(memoryBytes) else {
                throw ValidationError("--memory-bytes: expected a byte size such as 67108864 or 64MB, got \"\(memoryBytes)\"")
            }
            return bytes
        }
    }

    func validate() throws {
        _ = try storePath
        _ = try budget
        do {
            _ = try SocketAddress(parsing: coordinator)
        } catch {
            throw ValidationError("--coordinator: \(error)")
        }
    }

    func run() async throws {
        ProcessSetup.start(logLevel: Logger.Level(rawValue: logLevel) ?? .info)
        let identity = WorkerIdentity(kind: "cache", name: name, token: ProcessSetup.environment("MONARCH_TOKEN"))
        let logger = Logger(label: identity.name)
        let address = try SocketAddress(parsing: coordinator)
        let path = try storePath
        let budget = try budget
        let keepStale = Duration.seconds(Int64(clamping: keepStaleSeconds))
        let loop = try EventLoop(name: "monarch-cache-worker")
        defer { _ = loop.shutdown() }

        var file: SQLiteStore?
        if let path {
            do {
                try SQLiteStore.createFolder(containing: path)
                file = try await SQLiteStore(path: path, on: loop, logger: logger)
            } catch {
                logger.critical("cannot open the cache file \(path): \(error)")
                throw ExitCode.failure
            }
        }
        let provider = CacheProvider(memoryBytes: budget, store: file, keepStale: keepStale)
        let sweeper = try await CacheSweeper(
            provider: provider, every: min(.seconds(60), max(.seconds(1), keepStale)), on: loop, logger: logger)
        if let file {
            logger.info(
                "serving \(file.path): \(file.entriesAtOpen) entries on disk, memory budget \(budget) bytes, expired entries kept \(keepStaleSeconds) s")
        } else {
            logger.info("serving from memory only: budget \(budget) bytes, expired entries kept \(keepStaleSeconds) s")
        }
        let runtime = WorkerRuntime(
            identity: identity,
            provider: provider, loop: loop, logger: logger)
        let served: Result<Void, any Error>
        do {
            try await WorkerMain.serve(runtime, coordinator: address, logger: logger)
            served = .success(())
        } catch {
            served = .failure(error)
        }
        await sweeper.close()
        await file?.close()
        try served.get()
    }
}
