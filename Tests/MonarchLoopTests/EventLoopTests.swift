import Foundation
import MonarchLoop
import Synchronization
import Testing

/// An actor whose state lives on the event loop's thread.
actor LoopIsolatedCounter {
    nonisolated let loop: EventLoop
    private(set) var count = 0

    init(loop: EventLoop) { self.loop = loop }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    func increment() -> Bool {
        count += 1
        return loop.inEventLoop
    }
}

@Suite struct EventLoopTests {
    @Test func executeRunsWorkOnTheLoopThreadInOrder() async throws {
        try await withLoop { loop in
            let seen = Mutex<[Int]>([])
            let onLoop = Mutex(true)
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                for index in 0..<1000 {
                    loop.execute {
                        seen.withLock { $0.append(index) }
                        if !loop.inEventLoop { onLoop.withLock { $0 = false } }
                        if index == 999 { done.resume() }
                    }
                }
            }
            #expect(seen.withLock { $0 } == Array(0..<1000))
            #expect(onLoop.withLock { $0 })
            #expect(!loop.inEventLoop)
        }
    }

    @Test func submitReturnsTheResultAndPropagatesErrors() async throws {
        struct Boom: Error {}
        try await withLoop { loop in
            let ranOnLoop = try await loop.submit { loop.inEventLoop }
            #expect(ranOnLoop)
            await #expect(throws: Boom.self) { try await loop.submit { throw Boom() } }
        }
    }

    @Test func anActorCanLiveOnTheLoop() async throws {
        try await withLoop { loop in
            let counter = LoopIsolatedCounter(loop: loop)
            for _ in 0..<100 { #expect(await counter.increment()) }
            #expect(await counter.count == 100)
        }
    }

    @Test func aTaskCanPreferTheLoopAsItsExecutor() async throws {
        try await withLoop { loop in
            let ranOnLoop = await Task(executorPreference: loop) { loop.inEventLoop }.value
            #expect(ranOnLoop)
        }
    }

    @Test func shutdownClosesAndCountsHandlesLeftOpen() async throws {
        let loop = try EventLoop(name: "leaky")
        _ = try await loop.submit { try LoopTimer(on: loop) }
        _ = try await loop.submit { try Listener(address: .tcp(host: "127.0.0.1", port: 0), on: loop) { $0.close() } }
        let report = loop.shutdown()
        #expect(report.handlesLeftOpen == 2)
        #expect(report.loopClosed)
        #expect(loop.shutdown() == report)
    }

    @Test(.timeLimit(.minutes(1)))
    func aTaskThatKeepsYieldingDoesNotStarveTheLoop() async throws {
        try await withLoop { loop in
            let timerFired = Atomic<Bool>(false)
            let timer = try await loop.submit { try LoopTimer(on: loop) }
            loop.execute { timer.start(afterMs: 10) { timerFired.store(true, ordering: .releasing) } }
            // Were the loop to run queued jobs until none were left, this task would keep it
            // from ever reaching its timers again.
            let spins = await Task(executorPreference: loop) {
                var spins = 0
                while !timerFired.load(ordering: .acquiring) {
                    spins += 1
                    await Task.yield()
                }
                return spins
            }.value
            #expect(spins > 0)
            await timer.closeAndWait()
        }
    }

    @Test func workQueuedByWorkOnTheLoopRunsInTheSamePass() async throws {
        try await withLoop { loop in
            // A frame read resumes a task, which starts another: three generations of work,
            // each queued by the one before on the loop thread, need no wake-up of the loop.
            let before = try await loop.submit { loop.passesWakingItself }
            let generations = Mutex(0)
            let woken = await withCheckedContinuation { (done: CheckedContinuation<Int, Never>) in
                loop.execute {
                    generations.withLock { $0 += 1 }
                    loop.execute {
                        generations.withLock { $0 += 1 }
                        loop.execute {
                            generations.withLock { $0 += 1 }
                            loop.execute { done.resume(returning: loop.passesWakingItself) }
                        }
                    }
                }
            }
            #expect(generations.withLock { $0 } == 3)
            #expect(woken == before)
        }
    }

    @Test func workSubmittedAfterShutdownFailsInsteadOfHanging() async throws {
        let loop = try EventLoop(name: "stopped")
        loop.shutdown()
        do {
            _ = try await loop.submit { 1 }
            Issue.record("work ran on a loop that had shut down")
        } catch let error as EventLoopError {
            #expect(error == .shutDown(loop: "stopped"))
            #expect(error.description.contains("stopped"))
        }
    }

    @Test func timersFireOnceOrRepeatedlyAndStop() async throws {
        try await withLoop { loop in
            let fired = Mutex(0)
            let timer = try await loop.submit { try LoopTimer(on: loop) }
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                loop.execute {
                    timer.start(afterMs: 1, repeatMs: 1) {
                        let count = fired.withLock { count in
                            count += 1
                            return count
                        }
                        if count == 5 {
                            timer.stop()
                            done.resume()
                        }
                    }
                }
            }
            // A stopped timer stays quiet: another timer of the same period fires ten times on
            // the loop meanwhile.
            let marker = try await loop.submit { try LoopTimer(on: loop) }
            let ticks = Mutex(0)
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                loop.execute {
                    marker.start(afterMs: 1, repeatMs: 1) {
                        let count = ticks.withLock { count in
                            count += 1
                            return count
                        }
                        if count == 10 {
                            marker.stop()
                            done.resume()
                        }
                    }
                }
            }
            #expect(fired.withLock { $0 } == 5)
            await marker.closeAndWait()
            await timer.closeAndWait()
            #expect(timer.isClosed)
        }
    }
}
