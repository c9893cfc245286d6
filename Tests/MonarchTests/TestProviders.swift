#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch

// Test doubles: Swift providers that record what they were asked and what they were handed.

extension RequestDomain {
    static let api: RequestDomain = "api"
    static let assets: RequestDomain = "assets"
    static let docs: RequestDomain = "docs"
}

/// The names of the providers asked, in the order they were asked (shared by a test's providers).
actor CallLog {
    private(set) var calls: [String] = []

    func record(_ name: String) { calls.append(name) }

    func count(of name: String) -> Int { calls.filter { $0 == name }.count }
}

/// A provider that gives the same outcome every time and records each call.
struct StubProvider: RequestProvider {
    let name: String
    let outcome: ProviderOutcome
    let log: CallLog

    init(_ name: String, _ outcome: ProviderOutcome, log: CallLog) {
        self.name = name
        self.outcome = outcome
        self.log = log
    }

    func perform(_ request: Request) async -> ProviderOutcome {
        await log.record(name)
        return outcome
    }
}

/// A provider that takes 10 s to answer unless its task is cancelled, which it honours at once.
/// It says so on `started` when it begins waiting.
struct SleepingProvider: RequestProvider {
    let name: String
    let started: AsyncStream<Void>.Continuation?

    init(_ name: String, started: AsyncStream<Void>.Continuation? = nil) {
        self.name = name
        self.started = started
    }

    func perform(_ request: Request) async -> ProviderOutcome {
        started?.yield()
        do {
            // Far past any deadline of the tests, even on a machine that holds tasks up for
            // seconds: only a cancellation ends it in time.
            try await Task.sleep(for: .seconds(300))
        } catch {
            return .failure(.cancelled)
        }
        return .response(Response(body: Data("late".utf8)))
    }
}

/// A response handed to a storing provider by write-back.
struct Stored: Sendable, Equatable {
    var provider: String
    var path: String
    var response: Response
}

/// Where storing providers report what they were handed; a test awaits the reports instead of
/// sleeping.
struct StoreProbe: Sendable {
    let stream: AsyncStream<Stored>
    let continuation: AsyncStream<Stored>.Continuation

    init() { (stream, continuation) = AsyncStream.makeStream(of: Stored.self) }
}

/// A cache-like provider: gives `outcome` (a miss unless set) and reports each write-back to `probe`.
struct StoringProvider: ResponseStoring {
    let name: String
    let outcome: ProviderOutcome
    let log: CallLog
    let probe: StoreProbe

    init(_ name: String, _ outcome: ProviderOutcome = .miss(reason: nil), log: CallLog, probe: StoreProbe) {
        self.name = name
        self.outcome = outcome
        self.log = log
        self.probe = probe
    }

    func perform(_ request: Request) async -> ProviderOutcome {
        await log.record(name)
        return outcome
    }

    func store(_ response: Response, for request: Request) async {
        probe.continuation.yield(Stored(provider: name, path: request.path, response: response))
    }
}

/// A chain of `providers`, each registered for every domain.
func chain(_ providers: any RequestProvider...) -> ProviderChain {
    var chain = ProviderChain()
    for provider in providers { chain.register(provider) }
    return chain
}

/// The error `body` throws (nil if it returned).
func chainError(_ body: () async throws(ChainError) -> Response) async -> ChainError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// The error `body` throws, nil when it answers.
func monarchError(_ body: () async throws(MonarchError) -> Response) async -> MonarchError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// The error `body` throws, nil when it answers.
func monarchError<T>(_ body: () async throws(MonarchError) -> T) async -> MonarchError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// A response outcome with `text` as its body.
func ok(_ text: String, status: Int = 200, cacheable: Bool = true, stale: Bool = false) -> ProviderOutcome {
    .response(Response(status: status, body: Data(text.utf8), stale: stale, cacheable: cacheable))
}
