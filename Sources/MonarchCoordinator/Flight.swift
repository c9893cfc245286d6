import Monarch
import MonarchLoop

/// One trip down the chain, shared by every identical request that arrives while it is under
/// way. Each waiter keeps its own deadline and may leave on its own (cancel, deadline); the
/// trip is cancelled when its last waiter leaves. Loop thread only.
final class Flight: @unchecked Sendable {
    private struct Waiter {
        var continuation: CheckedContinuation<Result<Response, ChainError>, Never>
        var timer: LoopTimer?
    }

    let loop: EventLoop
    /// The misses and failures so far, listed when a waiter's deadline passes.
    private(set) var attempts: [ProviderAttempt] = []
    private var waiters: [Int: Waiter] = [:]
    private var nextWaiter = 0
    private var result: Result<Response, ChainError>?
    private var task: Task<Void, Never>?
    /// Called once when the flight has finished or been abandoned.
    private let onFinish: (Flight) -> Void
    /// The providers the trip asks, in order: the one after the last attempt is being asked.
    private let asked: [String]

    /// Starts the trip: `request` down `providers`.
    init(
        request: Request, providers: [any RequestProvider], refreshes: RefreshGate, loop: EventLoop,
        onFinish: @escaping (Flight) -> Void
    ) {
        self.loop = loop
        self.onFinish = onFinish
        self.asked = ProviderChain.asked(for: request, from: providers).map(\.name)
        let end = request.deadline.map { ContinuousClock.now + $0 }
        task = Task(executorPreference: loop) { [self] in
            let result: Result<Response, ChainError> = await WorkerPool.$tripStart.withValue(.now) {
                await WorkerPool.$tripEnd.withValue(end) {
                    do throws(ChainError) {
                        return .success(try await ProviderChain.perform(request, along: providers, refreshes: refreshes) {
                            attempts.append($0)
                        })
                    } catch {
                        return .failure(error)
                    }
                }
            }
            complete(with: result)
        }
    }

    /// The trip's result, or this waiter's own deadline or cancellation, whichever comes first.
    func wait(deadline: Duration) async -> Result<Response, ChainError> {
        loop.preconditionInEventLoop()
        let waiter = nextWaiter
        nextWaiter += 1
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if let result {
                    continuation.resume(returning: result)
                } else if Task.isCancelled {
                    continuation.resume(returning: .failure(cancelled()))
                    // The trip may have been started for this waiter alone.
                    abandonIfUnwanted()
                } else {
                    let timer = try? LoopTimer(on: loop)
                    waiters[waiter] = Waiter(continuation: continuation, timer: timer)
                    timer?.start(afterMs: deadline.wholeMilliseconds) { [unowned self] in
                        leave(waiter, with: .failure(deadlinePassed(deadline)))
                    }
                }
            }
        } onCancel: {
            loop.execute { [self] in leave(waiter, with: .failure(cancelled())) }
        }
    }

    /// The error of a waiter whose deadline passed: the attempts so far, and a `timeout` for
    /// the provider being asked.
    private func deadlinePassed(_ deadline: Duration) -> ChainError {
        var attempts = self.attempts
        if attempts.count < asked.count {
            attempts.append(ProviderAttempt(
                provider: asked[attempts.count], outcome: .timeout,
                message: "no answer within \(deadline.wholeMilliseconds) ms"))
        }
        return ChainError(.deadlineExceeded, "no answer within \(deadline.wholeMilliseconds) ms", attempts: attempts)
    }

    private func cancelled() -> ChainError {
        ChainError(.cancelled, "the request was cancelled", attempts: attempts)
    }

    /// Answers one waiter early; the trip is abandoned when nobody waits for it any more.
    private func leave(_ waiter: Int, with result: Result<Response, ChainError>) {
        guard let left = waiters.removeValue(forKey: waiter) else { return }
        left.timer?.close()
        left.continuation.resume(returning: result)
        abandonIfUnwanted()
    }

    /// Cancels the trip when nobody waits for it any more.
    private func abandonIfUnwanted() {
        if waiters.isEmpty, result == nil, let task {
            self.task = nil
            task.cancel()
            onFinish(self)
        }
    }

    private func complete(with result: Result<Response, ChainError>) {
        self.result = result
        let answered = waiters.values
        waiters.removeAll()
        for waiter in answered {
            waiter.timer?.close()
            waiter.continuation.resume(returning: result)
        }
        if task != nil {
            task = nil
            onFinish(self)
        }
    }
}

/// The trips under way, by request key: a read identical to one in flight joins it instead of
/// starting another. Loop thread only.
final class FlightTable: @unchecked Sendable {
    let loop: EventLoop
    private var flights: [String: Flight] = [:]
    /// Requests that joined a trip already under way.
    private(set) var joined = 0
    /// Trips started.
    private(set) var started = 0
    /// The background refreshes (`cacheThenRefresh`) under way, at most one per cache key.
    let refreshes = RefreshGate()

    init(loop: EventLoop) { self.loop = loop }

    /// Trips under way.
    var count: Int { flights.count }

    /// The chain's answer to `request` within `deadline`, sharing the trip of an identical read
    /// in flight when `key` is given.
    func run(
        _ request: Request, along providers: [any RequestProvider], key: String?, deadline: Duration
    ) async -> Result<Response, ChainError> {
        loop.preconditionInEventLoop()
        let flight: Flight
        if let key, let underWay = flights[key] {
            joined += 1
            flight = underWay
        } else {
            started += 1
            flight = Flight(request: request, providers: providers, refreshes: refreshes, loop: loop) { [unowned self] finished in
                if let key, flights[key] === finished { flights[key] = nil }
            }
            if let key { flights[key] = flight }
        }
        return await flight.wait(deadline: deadline)
    }
}
