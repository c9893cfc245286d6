import Foundation
import Monarch
import MonarchLoop
import MonarchWire
import MonarchNetwork
import TestOrigins
import Testing
@_exported import TestWaiting

/// One test's world: a fresh loop, a multi on it, and the servers the test asked for.
struct Harness: Sendable {
    let loop: EventLoop
    let multi: CurlMulti
    let origin: TestServerProcess
    let httpbin: TestServerProcess?

    /// A provider allowing the origin (and httpbin, when running) unless `allow` is given.
    func provider(
        allow: [String]? = nil, retries: Int = 2, maxRedirects: Int = 5,
        maxResponseBytes: Int = NetworkConfiguration.defaultMaxResponseBytes,
        connectTimeout: Duration = .seconds(5)
    ) -> NetworkProvider {
        let entries = allow ?? [origin.allowEntry] + (httpbin.map { [$0.allowEntry] } ?? [])
        return NetworkProvider(
            multi: multi,
            configuration: NetworkConfiguration(
                allowlist: allowlist(entries), connectTimeout: connectTimeout,
                retry: RetryPolicy(maxRetries: retries), maxRedirects: maxRedirects, maxResponseBytes: maxResponseBytes))
    }

    /// The allowlist of `entries`, which the tests write correctly.
    private func allowlist(_ entries: [String]) -> UpstreamAllowlist {
        do {
            return try UpstreamAllowlist(parsing: entries)
        } catch {
            preconditionFailure("a test wrote an invalid allowlist entry: \(error)")
        }
    }

    /// What the origin has seen so far.
    func stats() async throws -> OriginStats {
        guard case .answered(let response) = await multi.fetch(FetchSpec(url: origin.url("/stats"))) else {
            throw TestServerError(message: "no stats from the origin")
        }
        return try JSONDecoder().decode(OriginStats.self, from: response.body)
    }

    /// Asks the origin for its stats every 20 ms until it has seen a request for `path`, at
    /// most `attempts` times, and stops at the first that shows one; returns whether one did.
    /// (A `for … where` loop would go on asking all `attempts` times: each ask is a round
    /// trip, and on a loaded machine they outlast the slow exchange being waited for.)
    @discardableResult
    func waitForHit(_ path: String, attempts: Int = 100) async throws -> Bool {
        for _ in 0..<attempts {
            if try await stats().hits[path] != nil { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
}

/// The origin's `/stats`.
struct OriginStats: Decodable {
    var connections: Int
    var hits: [String: Int]
    var closed: [String]
    var flaky: [String: Int]
}

/// A request routed to `upstream`.
func routed(
    _ upstream: String?, method: String = "GET", headers: [String: String] = [:], body: Data? = nil,
    deadline: Duration? = nil
) -> Request {
    Request(
        path: "test", method: method, headers: headers, body: body, deadline: deadline,
        route: RouteContext(upstream: upstream))
}

/// Performs `request` in a task running on the provider's loop, as the worker runtime does,
/// and returns the outcome with the time it took, measured on the loop.
func timed(_ provider: NetworkProvider, _ request: Request) async -> (ProviderOutcome, Duration) {
    await Task(executorPreference: provider.multi.loop) {
        let start = ContinuousClock.now
        let outcome = await provider.perform(request)
        return (outcome, ContinuousClock.now - start)
    }.value
}

/// Runs `body` with a fresh loop, multi and origin (and httpbin when asked); afterwards
/// closes the multi, stops the servers and checks that the loop shut down with no handle left.
func withHarness(httpbin startHttpbin: Bool = false, _ body: (Harness) async throws -> Void) async throws {
    let loop = try EventLoop(name: "network-test")
    let multi: CurlMulti
    do {
        multi = try await loop.submit { try CurlMulti(on: loop) }
    } catch {
        loop.shutdown()
        throw error
    }
    var servers: [TestServerProcess] = []
    func finish() async {
        await multi.close()
        for server in servers { await server.stop() }
        let report = loop.shutdown()
        #expect(report.handlesLeftOpen == 0, "handles left open")
        #expect(report.loopClosed, "uv_loop_close failed")
    }
    do {
        let origin = try await TestServerProcess.origin()
        servers.append(origin)
        let httpbin = startHttpbin ? try await TestServerProcess.httpbin() : nil
        if let httpbin { servers.append(httpbin) }
        try await body(Harness(loop: loop, multi: multi, origin: origin, httpbin: httpbin))
    } catch {
        await finish()
        throw error
    }
    await finish()
}

extension ProviderOutcome {
    /// The response, or nil (after recording an issue) for a miss or a failure.
    func response(sourceLocation: SourceLocation = #_sourceLocation) -> Response? {
        if case .response(let response) = self { return response }
        Issue.record("expected a response, got \(self)", sourceLocation: sourceLocation)
        return nil
    }

    /// The failure, or nil for a response or a miss.
    var failure: ProviderFailure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }

    /// The failure's code, or nil.
    var failureCode: FailureCode? { failure?.code }
}

extension Response {
    /// The body as UTF-8 text.
    var text: String { String(decoding: body, as: UTF8.self) }

    /// The value of header `name`, in any case.
    func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}

/// A port on 127.0.0.1 that nothing listens on (bound, then released).
func unusedPort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
            bind(descriptor, generic, length) == 0 && getsockname(descriptor, generic, &length) == 0
        }
    }
    guard bound else { throw TestServerError(message: "cannot bind a socket") }
    return Int(UInt16(bigEndian: address.sin_port))
}
