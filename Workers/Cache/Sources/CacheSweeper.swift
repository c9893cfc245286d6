import Logging
import Monarch
import MonarchLoop
import Synchronization

/// Runs ``CacheProvider/sweep()`` periodically on a loop timer, one sweep at a time (a tick
/// that comes while a sweep runs is skipped).
public final class CacheSweeper: Sendable {
    private let timer: LoopTimer
    private let gate = SweepGate()

    /// Starts sweeping `provider` every `interval` (the first sweep after one interval), on
    /// `loop`. Call ``close()`` when done, before the loop shuts down.
    ///
    /// - Throws: ``UVError`` when the timer cannot be created, or the loop's shutdown error.
    public init(provider: CacheProvider, every interval: Duration, on loop: EventLoop, logger: Logger) async throws {
        let intervalMs = max(1, interval.wholeMilliseconds)
        let gate = self.gate
        timer = try await loop.submit {
            let timer = try LoopTimer(on: loop)
            timer.start(afterMs: intervalMs, repeatMs: intervalMs) {
                guard gate.enter() else { return }
                Task {
                    defer { gate.leave() }
                    do {
                        let swept = try await provider.sweep()
                        if swept > 0 { logger.info("swept \(swept) entries that expired more than \(provider.keepStale) ago") }
                    } catch {
                        logger.error("the sweep of expired entries failed: \(error)")
                    }
                }
            }
            return timer
        }
    }

    /// Stops sweeping and closes the timer. A sweep under way finishes on its own.
    public func close() async {
        await timer.closeAndWait()
    }
}

/// Lets one sweep run at a time.
private final class SweepGate: Sendable {
    private let running = Atomic<Bool>(false)

    /// True when no sweep was running (one now is).
    func enter() -> Bool {
        running.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }

    func leave() {
        running.store(false, ordering: .releasing)
    }
}
