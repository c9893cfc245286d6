import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import Logging
import MonarchCache
import MonarchLoop
import MonarchWire
import MonarchWorker

/// `monarch-cache-worker`: keeps responses for a Monarch coordinator, in memory in front of an
/// SQLite file, or of a Redis database that several workers share (or in memory only).
@main
struct CacheWorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monarch-cache-worker",
        abstract: "Keep responses for a Monarch coordinator, as a worker of kind cache: a bounded LRU in memory in front of an SQLite file or a Redis database.",
        discussion: """
            Give exactly one of --store sqlite:PATH (entries survive restarts; an acknowledged store is on disk), \
            --store redis://HOST:PORT/DB (shared with the other cache workers using it; the password, if any, in \
            MONARCH_REDIS_PASSWORD) and --memory-only. The coordinator shards cache keys on the workers' names: keep \
            a worker's --name across restarts. Exits when the coordinator closes the connection; SIGTERM or SIGINT \
            finishes the requests in flight first.
            """,
        version: MonarchRelease.version
    )

    @OptionGroup var worker: WorkerOptions

    @Option(help: "The store behind memory: sqlite:PATH (its folder is created when missing, 0700; the file and its -wal and -shm are 0600), or redis://HOST:PORT/DB.")
    var store: String?

    @Flag(help: "Keep entries in memory only; they are lost when the worker stops.")
    var memoryOnly = false

    @Option(help: "The memory budget for entries: bytes, or with a unit (512KB, 64MB, 1GB).")
    var memoryBytes: String = "64MB"

    @Option(help: "How long an expired entry is kept for stale answers before it is swept (or, in Redis, expires), in seconds.")
    var keepStaleSeconds: UInt64 = 86_400

    @Option(help: "Redis store: how long a connect or a command may take before the connection is dropped and tried again, in milliseconds.")
    var storeTimeoutMs: UInt64 = RedisSettings().timeoutMs

    @Option(help: "Redis or SQLite store: the most commands awaiting Redis's replies, or operations waiting for the disk; beyond it a lookup misses and a write is dropped at once.")
    var storeMaxPending: Int = RedisSettings().maxPending

    @Option(help: "Redis store: how long memory keeps answering after Redis's change notifications stopped (Redis down), before it is emptied (other coordinators' changes are not heard meanwhile), in milliseconds; 0 empties it at once.")
    var memoryGraceMs: UInt64 = UInt64(CacheProvider.defaultMemoryGrace.wholeMilliseconds)

    /// Where entries are kept behind memory.
    private enum StoreChoice {
        case memoryOnly
        case sqlite(path: String)
        case redis(RedisAddress)
    }

    /// The store from `--store`, or memory only.
    private var storeChoice: StoreChoice {
        get throws {
            switch (store, memoryOnly) {
            case (nil, false): throw ValidationError("give --store sqlite:PATH or --store redis://HOST:PORT/DB, or --memory-only")
            case (_?, true): throw ValidationError("give either --store or --memory-only, not both")
            case (nil, true): return .memoryOnly
            case (let store?, false):
                if store.hasPrefix("redis://") || store.hasPrefix("rediss://") {
                    do {
                        return .redis(try RedisAddress(parsing: store))
                    } catch {
                        throw ValidationError("--store: \(error)")
                    }
                }
                guard store.hasPrefix("sqlite:"), store.count > "sqlite:".count else {
                    throw ValidationError("--store: expected sqlite:PATH or redis://HOST:PORT/DB, got \"\(store)\"")
                }
                return .sqlite(path: String(store.dropFirst("sqlite:".count)))
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
        _ = try storeChoice
        _ = try budget
        guard storeMaxPending >= 1 else { throw ValidationError("--store-max-pending: expected at least 1, got \(storeMaxPending)") }
        guard storeTimeoutMs >= 1 else { throw ValidationError("--store-timeout-ms: expected at least 1, got \(storeTimeoutMs)") }
    }

    func run() async throws {
        worker.setUpProcess()
        let identity = WorkerIdentity(kind: "cache", name: worker.name, token: WorkerIdentity.tokenFromEnvironment)
        let logger = Logger(label: identity.name)
        let address = try worker.coordinatorAddress()
        let choice = try storeChoice
        let budget = try budget
        let keepStale = Duration.seconds(Int64(clamping: keepStaleSeconds))
        let loop = try EventLoop(name: "monarch-cache-worker")
        defer { _ = loop.shutdown() }

        let store: (any CacheStore)?
        switch choice {
        case .memoryOnly:
            store = nil
            logger.info("serving from memory only: budget \(budget) bytes, expired entries kept \(keepStaleSeconds) s")
        case .sqlite(let path):
            do {
                try SQLiteStore.createFolder(containing: path)
                let file = try await SQLiteStore(path: path, on: loop, maxWaiting: storeMaxPending, logger: logger)
                store = file
                logger.info(
                    "serving \(file.path): \(file.entriesAtOpen) entries on disk, memory budget \(budget) bytes, expired entries kept \(keepStaleSeconds) s")
            } catch {
                logger.critical("cannot open the cache file \(path): \(error)")
                throw ExitCode.failure
            }
        case .redis(let address):
            let settings = RedisSettings(timeoutMs: storeTimeoutMs, maxPending: storeMaxPending)
            store = try await RedisStore(
                address: address, password: ProcessSetup.environment("MONARCH_REDIS_PASSWORD"), settings: settings,
                keepStale: keepStale, on: loop, logger: logger)
            logger.info(
                "serving \(address) (shared), memory budget \(budget) bytes, expired entries kept \(keepStaleSeconds) s")
        }
        let provider = CacheProvider(
            memoryBytes: budget, store: store, keepStale: keepStale,
            memoryGrace: .milliseconds(Int64(clamping: memoryGraceMs)))
        let sweeper = try await CacheSweeper(
            provider: provider, every: min(.seconds(60), max(.seconds(1), keepStale)), on: loop, logger: logger)
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
        await store?.close()
        try served.get()
    }
}
