#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import Monarch
import MonarchLoop
import MonarchWire
import MonarchWorker
import Synchronization

/// The network worker's provider: fetches `request.route.upstream` (the URL the coordinator
/// filled in from the route) with libcurl on the worker's loop.
///
/// - Only `http` and `https` URLs whose host and port are in the allowlist are contacted;
///   anything else is an `upstreamNotAllowed` failure before any connection is made.
/// - Redirects are followed here, not by libcurl, so each target is checked against the
///   allowlist (`redirectNotAllowed`), up to ``NetworkConfiguration/maxRedirects``
///   (`tooManyRedirects`).
/// - Every wait is capped by the request's deadline (the budget left; a little is kept back
///   so the answer reaches the coordinator in time): a slow upstream is a `timeout` failure.
/// - Idempotent methods are retried after connection failures and 502/503/504 answers, with
///   backoff, never past the deadline.
/// - 2xx, 3xx (not followed), 304 and 4xx answers are responses; 404 and 410 are misses (a
///   later provider may have the resource); 5xx answers are `upstreamStatus` failures;
///   connection failures `connectionFailed`; bodies over the limit (the configured
///   ``NetworkConfiguration/maxResponseBytes``, capped by what a frame to the coordinator
///   carries) `responseTooLarge`, the transfer stopped as soon as it is known; cancellation
///   `cancelled`.
/// - A relayed request (``Monarch/Request/relay``, an HTTP client's) gets the upstream's answer
///   as it is: no redirect is followed, every status is a response, and only connection
///   failures are retried.
/// - A response carries the upstream's `Cache-Control` as ``Monarch/Response/ttl`` and
///   ``Monarch/Response/cacheable`` (see ``CacheHints``); only GET and HEAD responses are
///   cacheable.
public struct NetworkProvider: LoopRequestProvider {
    /// The multi every exchange runs on.
    public let multi: CurlMulti
    /// What the provider may fetch, and how.
    public let configuration: NetworkConfiguration
    let logger: Logger
    /// The largest body a frame to the coordinator carries (`Int.max` until told).
    private let frameBodyBytes = FrameBodyLimit()

    /// The methods passed through.
    public static let methods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]

    /// A provider fetching on `multi` as `configuration` allows.
    public init(multi: CurlMulti, configuration: NetworkConfiguration, logger: Logger = Logger(label: "monarch.network")) {
        self.multi = multi
        self.configuration = configuration
        self.logger = logger
    }

    /// `network`.
    public var name: String { "network" }

    /// The largest response body accepted now: the smaller of the configured
    /// ``NetworkConfiguration/maxResponseBytes`` and the largest body a frame to the
    /// coordinator carries (see ``limitBodies(toFitFrameBodiesOf:)``).
    public var effectiveMaxResponseBytes: Int { min(configuration.maxResponseBytes, frameBodyBytes.value) }

    /// Caps the response bodies accepted at `bytes`, the largest body a frame to the
    /// coordinator carries (the worker learns it from the coordinator's `welcome`); the
    /// configured limit still applies when smaller. Shared by every copy of this provider.
    public func limitBodies(toFitFrameBodiesOf bytes: Int) {
        frameBodyBytes.value = max(0, bytes)
    }

    /// The loop the provider's exchanges run on: its multi's.
    public var loop: EventLoop { multi.loop }

    /// Starts answering `request` from its upstream on the multi's loop, with no task (see
    /// ``LoopRequestProvider``): `answer` gets the outcome once, on the loop thread. Loop thread
    /// only.
    public func start(_ request: Request, answer: @escaping (ProviderOutcome) -> Void) -> any ProviderRun {
        NetworkFetch.start(request, for: self, answer: answer) ?? Self.answeredAtOnce
    }

    /// What ``start(_:answer:)`` returns for a request answered before any exchange.
    private static let answeredAtOnce = AnsweredRun()

    /// Answers `request` from its upstream; never throws, returns promptly once the task is
    /// cancelled. Runs on the multi's loop (a caller elsewhere hops there once per request); a
    /// caller whose loop has begun to shut down gets a `cancelled` failure at once.
    public func perform(_ request: Request) async -> ProviderOutcome {
        if Task.isCancelled { return .failure(.cancelled) }
        let run = PerformedRun()
        let loop = self.loop
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let begin: @Sendable () -> Void = {
                    guard !run.cancelled else {
                        continuation.resume(returning: .failure(.cancelled))
                        return
                    }
                    run.fetch = NetworkFetch.start(request, for: self) { continuation.resume(returning: $0) }
                }
                if loop.inEventLoop {
                    begin()
                } else {
                    // `submit`, unlike `execute`, reports a loop that no longer takes work: the
                    // caller is answered here. Awaited off the loop, which may be the one refusing.
                    Task(executorPreference: globalConcurrentExecutor) {
                        do {
                            try await loop.submit(begin)
                        } catch {
                            continuation.resume(returning: .failure(ProviderFailure(
                                code: .cancelled, message: "the fetcher's loop has shut down")))
                        }
                    }
                }
            }
        } onCancel: {
            // Even on the loop thread this runs later; a cancel that overtakes the start is
            // remembered by the run.
            loop.execute {
                run.cancelled = true
                run.fetch?.cancel()
            }
        }
    }

    /// The part of a budget the provider uses: all but a tenth, at most 100 ms, kept back so
    /// that a timeout failure reaches the coordinator before its own deadline fires.
    static func usable(_ budget: Duration) -> Duration {
        guard budget > .zero else { return .zero }
        return budget - min(.milliseconds(100), budget / 10)
    }

    static func isRetryable(_ result: FetchResult, statuses: Bool) -> Bool {
        switch result {
        case .answered(let response): statuses && RetryPolicy.isRetryable(status: response.status)
        case .failed(let failure): failure.kind == .connectionFailed
        }
    }

    static func summary(_ result: FetchResult) -> String {
        switch result {
        case .answered(let response): "status \(response.status)"
        case .failed(let failure): failure.message
        }
    }

    func outcome(
        of failure: FetchFailure, url: UpstreamURL, attempts: Int, budget: Duration, maxResponseBytes: Int
    ) -> ProviderOutcome {
        let tries = attempts == 1 ? "1 attempt" : "\(attempts) attempts"
        switch failure.kind {
        case .cancelled:
            return .failure(.cancelled)
        case .timeout:
            return .failure(ProviderFailure(
                code: .timeout,
                message: "\(url) did not answer within the request's budget of \(budget.wholeMilliseconds) ms (\(failure.message))"))
        case .connectionFailed:
            return .failure(ProviderFailure(
                code: .connectionFailed, message: "cannot fetch \(url) after \(tries): \(failure.message)"))
        case .responseTooLarge:
            let why = maxResponseBytes < configuration.maxResponseBytes
                ? " (the largest body a frame to the coordinator carries)" : " (the worker's --max-response-bytes)"
            return .failure(ProviderFailure(code: .responseTooLarge, message: "\(url): \(failure.message)\(why)"))
        case .other:
            return .failure(ProviderFailure(code: .fetchFailed, message: "\(url): \(failure.message)"))
        }
    }

    /// The upstream's answer to a relayed request, as it is: every HTTP status is a response
    /// (caching is decided by the chain, by HTTP's rules), a status outside 100-599 an
    /// `upstreamStatus` failure.
    func relayed(_ answer: FetchedResponse, method: String, url: UpstreamURL) -> ProviderOutcome {
        guard Self.statuses.contains(answer.status) else {
            return .failure(ProviderFailure(
                code: .upstreamStatus, message: "\(url) answered \(answer.status), which is not an HTTP status (100-599)"))
        }
        return .response(Response(
            status: answer.status,
            headers: HeaderForwarding.responseHeaders(
                answer.headers, bodyLength: method == "HEAD" ? nil : answer.body.count, decoded: false),
            body: answer.body, source: name))
    }

    /// The statuses a response may have: HTTP's, as the wire protocol allows them.
    private static let statuses = 100...599

    func outcome(of answer: FetchedResponse, method: String, url: UpstreamURL, attempts: Int) -> ProviderOutcome {
        switch answer.status {
        case 404, 410:
            return .miss(reason: "\(url) answered \(answer.status)")
        case 500...599:
            let tries = attempts == 1 ? "1 attempt" : "\(attempts) attempts"
            return .failure(ProviderFailure(code: .upstreamStatus, message: "\(url) answered \(answer.status) after \(tries)"))
        case let status where !Self.statuses.contains(status):
            // libcurl takes any three digits; a response message carries an HTTP status only.
            return .failure(ProviderFailure(
                code: .upstreamStatus, message: "\(url) answered \(status), which is not an HTTP status (100-599)"))
        default:
            let hints = CacheHints(cacheControl: answer.headers["cache-control"])
            let readOnly = method == "GET" || method == "HEAD"
            return .response(Response(
                status: answer.status,
                headers: HeaderForwarding.responseHeaders(answer.headers, bodyLength: method == "HEAD" ? nil : answer.body.count),
                body: answer.body, source: name, ttl: hints.ttl, cacheable: hints.cacheable && readOnly))
        }
    }
}

/// A body size limit shared by the copies of a provider and changed while it serves.
private final class FrameBodyLimit: Sendable {
    private let bytes = Atomic<Int>(Int.max)

    var value: Int {
        get { bytes.load(ordering: .relaxed) }
        set { bytes.store(newValue, ordering: .relaxed) }
    }
}

/// The run of a request answered before any exchange: nothing to cancel.
private final class AnsweredRun: ProviderRun {
    func cancel() {}
}

/// What a ``NetworkProvider/perform(_:)`` shares between its task and the loop: the fetch once
/// started, and a cancel that came first. Loop thread only.
private final class PerformedRun: @unchecked Sendable {
    var fetch: NetworkFetch?
    var cancelled = false
}
