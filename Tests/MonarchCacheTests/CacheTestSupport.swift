import Foundation
import Logging
import Monarch
@testable import MonarchCache
import MonarchLoop
import MonarchWire
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A wall clock the test moves by hand, starting at a fixed, realistic time.
final class ManualClock: Sendable {
    private let nowMs = Atomic<Int64>(1_750_000_000_000)

    var clock: WallClock {
        WallClock { [self] in now }
    }

    var now: Int64 { nowMs.load(ordering: .relaxed) }

    func advance(by duration: Duration) {
        nowMs.add(Int64(duration.wholeMilliseconds), ordering: .relaxed)
    }
}

/// Log records kept for a test to look at.
final class LogRecords: Sendable {
    private let records = Mutex<[(Logger.Level, String)]>([])

    var logger: Logger {
        Logger(label: "cache-test") { _ in RecordingHandler(records: self) }
    }

    func append(_ level: Logger.Level, _ message: String) { records.withLock { $0.append((level, message)) } }

    /// The messages logged at `level`.
    func messages(at level: Logger.Level) -> [String] { records.withLock { $0.filter { $0.0 == level }.map(\.1) } }
}

private struct RecordingHandler: LogHandler {
    let records: LogRecords
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        records.append(event.level, "\(event.message)")
    }
}

/// A test's own temporary folder, loop, clock and logs.
struct CacheFixture {
    let folder: String
    let loop: EventLoop
    let clock = ManualClock()
    let logs = LogRecords()

    /// The default cache file in the folder.
    var path: String { folder + "/cache.db" }

    /// Opens the SQLite store at `path` (default: ``path``), queueing at most `maxWaiting`
    /// operations.
    func openStore(at path: String? = nil, maxWaiting: Int = 4096) async throws -> SQLiteStore {
        try await SQLiteStore(path: path ?? self.path, on: loop, maxWaiting: maxWaiting, logger: logs.logger)
    }

    /// A provider over `store` (nil: memory only) on this fixture's clock.
    func provider(store: SQLiteStore?, memoryBytes: Int = 1 << 20, keepStale: Duration = .seconds(86_400)) -> CacheProvider {
        CacheProvider(memoryBytes: memoryBytes, store: store, keepStale: keepStale, clock: clock.clock)
    }

    /// The names in the folder, sorted.
    func files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }
}

/// Runs `body` with a fresh folder and loop; afterwards removes the folder and checks that the
/// loop shut down with no handle left open.
func withCacheFixture(_ body: (CacheFixture) async throws -> Void) async throws {
    var template = Array("/tmp/monarch-cache-test-XXXXXX".utf8CString)
    guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
        throw POSIXFailure(call: "mkdtemp", code: errno)
    }
    let folder = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    let loop = try EventLoop(name: "cache-test")
    let fixture = CacheFixture(folder: folder, loop: loop)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    do {
        try await body(fixture)
    } catch {
        loop.shutdown()
        throw error
    }
    let report = loop.shutdown()
    #expect(report.handlesLeftOpen == 0)
    #expect(report.loopClosed)
}

struct POSIXFailure: Error, CustomStringConvertible {
    let call: String
    let code: Int32
    var description: String { "\(call): \(String(cString: strerror(code)))" }
}

/// A GET (or `method`) request for cache key `key`.
func cacheRequest(_ key: String, method: String = "GET") -> Request {
    Request(path: key, method: method, route: RouteContext(cacheKey: key))
}

/// A 200 response holding `text`, fresh for `ttl`.
func textResponse(_ text: String, ttl: Duration? = nil, headers: [String: String] = ["content-type": "text/plain"]) -> Response {
    Response(status: 200, headers: headers, body: Data(text.utf8), ttl: ttl)
}

extension ProviderOutcome {
    /// The response, or nil for a miss or a failure.
    var response: Response? {
        if case .response(let response) = self { return response }
        return nil
    }

    /// Whether it is a miss.
    var isMiss: Bool {
        if case .miss = self { return true }
        return false
    }

    /// The failure's code, or nil.
    var failureCode: FailureCode? {
        if case .failure(let failure) = self { return failure.code }
        return nil
    }
}

/// Waits until `condition` holds, checking every millisecond, for at most `limit` (long: a
/// full run on 2 cores holds tasks up for many seconds at its start).
func waitUntil(_ limit: Duration = .seconds(60), _ condition: () -> Bool) async throws {
    let start = ContinuousClock.now
    while !condition() {
        guard ContinuousClock.now - start < limit else {
            Issue.record("the condition did not come true within \(limit)")
            return
        }
        try await Task.sleep(for: .milliseconds(1))
    }
}

/// A flag one task raises and another reads.
final class Flag: Sendable {
    private let raised = Atomic<Bool>(false)

    func raise() { raised.store(true, ordering: .releasing) }

    var isRaised: Bool { raised.load(ordering: .acquiring) }
}

/// A latch a thread-pool job waits on until the test opens it.
final class Latch: Sendable {
    private let entered = Atomic<Bool>(false)
    private let opened = Atomic<Bool>(false)

    /// Blocks the calling (pool) thread until ``open()``.
    func block() {
        entered.store(true, ordering: .releasing)
        while !opened.load(ordering: .acquiring) { usleep(200) }
    }

    var hasEntered: Bool { entered.load(ordering: .acquiring) }

    func open() { opened.store(true, ordering: .releasing) }
}
