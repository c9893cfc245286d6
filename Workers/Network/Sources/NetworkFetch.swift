#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
import MonarchLoop
import MonarchWire
import MonarchWorker

/// One request of a ``NetworkProvider`` being answered on the multi's loop, with no task: its
/// exchanges one after another (the retries of one URL, then the redirects followed), each
/// started from the end of the one before, and the retry waits on a loop timer.
///
/// It keeps every rule ``NetworkProvider`` states; ``NetworkProvider/perform(_:)`` runs one
/// too. Loop thread only.
final class NetworkFetch: ProviderRun, @unchecked Sendable {
    private let provider: NetworkProvider
    private let request: Request
    private var answer: ((ProviderOutcome) -> Void)?

    private let budget: Duration
    private let deadline: ContinuousClock.Instant
    private let maxResponseBytes: Int
    private var url: UpstreamURL
    private var method: String
    private var headers: [(name: String, value: String)]
    private var body: Data?
    private var redirects = 0
    /// Attempts at the current URL.
    private var attempts = 0
    private var generator = SystemRandomNumberGenerator()

    /// The exchange in flight, if one is.
    private var exchange: CurlTransfer?
    /// The wait before the next attempt, if one is under way.
    private var retryTimer: LoopTimer?
    private var cancelled = false

    private var multi: CurlMulti { provider.multi }

    private init(
        provider: NetworkProvider, request: Request, url: UpstreamURL, method: String,
        headers: [(name: String, value: String)], answer: @escaping (ProviderOutcome) -> Void
    ) {
        self.provider = provider
        self.request = request
        self.answer = answer
        self.budget = request.deadline ?? provider.configuration.defaultTimeout
        self.deadline = ContinuousClock.now + NetworkProvider.usable(budget)
        self.maxResponseBytes = provider.effectiveMaxResponseBytes
        self.url = url
        self.method = method
        self.headers = headers
        self.body = request.body
    }

    /// Starts answering `request` for `provider`: its first exchange starts now, or `answer`
    /// gets the reason there is none at once (no upstream, one not allowed, a method or headers
    /// that cannot be sent). Loop thread only.
    static func start(
        _ request: Request, for provider: NetworkProvider, answer: @escaping (ProviderOutcome) -> Void
    ) -> NetworkFetch? {
        provider.multi.loop.preconditionInEventLoop()
        guard let upstream = request.route.upstream else {
            answer(.miss(reason: "the route names no upstream"))
            return nil
        }
        let url: UpstreamURL
        do {
            url = try UpstreamURL(parsing: upstream)
        } catch {
            answer(.failure(ProviderFailure(code: .invalidUpstream, message: "\(error)")))
            return nil
        }
        if let refusal = provider.configuration.allowlist.refusal(of: url) {
            answer(.failure(ProviderFailure(code: .upstreamNotAllowed, message: refusal)))
            return nil
        }
        let method = request.method.uppercased()
        guard NetworkProvider.methods.contains(method) || request.relay && WireProtocol.isValidMethod(method) else {
            answer(.failure(ProviderFailure(
                code: .invalidRequest,
                message: "the network worker sends GET, HEAD, POST, PUT, PATCH and DELETE (any method when relayed), not \(request.method)")))
            return nil
        }
        let headers: [(name: String, value: String)]
        switch HeaderForwarding.requestHeaders(request.headers) {
        case .success(let forwarded): headers = forwarded
        case .failure(let error):
            answer(.failure(ProviderFailure(code: .invalidRequest, message: error.message)))
            return nil
        }
        let fetch = NetworkFetch(provider: provider, request: request, url: url, method: method, headers: headers, answer: answer)
        fetch.attempt()
        return fetch
    }

    /// Ends the fetch with a `cancelled` failure, unless it has ended: the exchange in flight
    /// is removed from the multi at once, a retry wait ends. Loop thread only.
    func cancel() {
        guard answer != nil, !cancelled else { return }
        cancelled = true
        if let exchange {
            // Its completion answers, as any exchange's end does.
            multi.cancelExchange(exchange)
        } else {
            retryTimer?.close()
            retryTimer = nil
            finish(.failure(.cancelled))
        }
    }

    // MARK: - Exchanges

    /// One attempt at the current URL, within what is left of the deadline.
    private func attempt() {
        let remaining = deadline - .now
        guard remaining > .zero else {
            exchanged(.failed(FetchFailure(kind: .timeout, message: "the deadline passed")))
            return
        }
        attempts += 1
        let configuration = provider.configuration
        let spec = FetchSpec(
            url: url.url, method: method, headers: headers, body: body,
            connectTimeout: min(configuration.connectTimeout, remaining), timeout: remaining,
            maxResponseBytes: maxResponseBytes, decodesContent: !request.relay)
        var started: CurlTransfer?
        let transfer = multi.exchange(spec) { [self] result in
            if exchange === started { exchange = nil }
            attempted(result)
        }
        started = transfer
        exchange = transfer
        multi.startExchange(transfer)
    }

    /// What follows an attempt: a retry after a wait, as the policy allows for an idempotent
    /// method, or the end of the exchange with `result`.
    private func attempted(_ result: FetchResult) {
        guard answer != nil else { return }
        let policy = provider.configuration.retry
        guard !cancelled, RetryPolicy.isIdempotent(method), attempts <= policy.maxRetries,
            NetworkProvider.isRetryable(result, statuses: !request.relay)
        else {
            exchanged(result)
            return
        }
        let wait = policy.delay(beforeRetry: attempts, using: &generator)
        guard ContinuousClock.now + wait < deadline, let timer = try? LoopTimer(on: multi.loop) else {
            exchanged(result)
            return
        }
        provider.logger.debug(
            "retrying \(method) \(url) in \(wait) after attempt \(attempts): \(NetworkProvider.summary(result))")
        retryTimer = timer
        timer.start(afterMs: UInt64(clamping: wait.wholeMillisecondsRoundedUp)) { [self] in
            timer.close()
            retryTimer = nil
            attempt()
        }
    }

    /// The end of the exchange with the current URL: the answer, a failure, or the next URL
    /// of a redirect followed.
    private func exchanged(_ result: FetchResult) {
        let answered: FetchedResponse
        switch result {
        case .failed(let failure):
            finish(provider.outcome(of: failure, url: url, attempts: attempts, budget: budget, maxResponseBytes: maxResponseBytes))
            return
        case .answered(let response):
            answered = response
        }
        if request.relay {
            finish(provider.relayed(answered, method: method, url: url))
            return
        }
        guard RedirectStep.followed.contains(answered.status), let location = answered.redirectURL else {
            finish(provider.outcome(of: answered, method: method, url: url, attempts: attempts))
            return
        }
        let maxRedirects = provider.configuration.maxRedirects
        redirects += 1
        guard redirects <= maxRedirects else {
            finish(.failure(ProviderFailure(
                code: .tooManyRedirects, message: "more than \(maxRedirects) redirects, the last from \(url) to \(location)")))
            return
        }
        let target: UpstreamURL
        do {
            target = try UpstreamURL(parsing: location)
        } catch {
            finish(.failure(ProviderFailure(code: .redirectNotAllowed, message: "\(url) redirected to \(error)")))
            return
        }
        if let refusal = provider.configuration.allowlist.refusal(of: target) {
            finish(.failure(ProviderFailure(
                code: .redirectNotAllowed, message: "\(url) redirected to \(target), refused: \(refusal)")))
            return
        }
        provider.logger.debug("following a \(answered.status) redirect from \(url) to \(target)")
        let step = RedirectStep(status: answered.status, from: url, to: target, method: method, headers: headers, body: body)
        (url, method, headers, body) = (target, step.method, step.headers, step.body)
        guard !cancelled else {
            finish(.failure(.cancelled))
            return
        }
        attempts = 0
        attempt()
    }

    private func finish(_ outcome: ProviderOutcome) {
        guard let answer else { return }
        self.answer = nil
        answer(outcome)
    }
}
