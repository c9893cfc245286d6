import Foundation
import MonarchLoop
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct ThreadPoolTests {
    @Test func theWorkRunsOffTheLoopThread() async throws {
        try await withLoop { loop in
            let loopThread = try await loop.submit { pthread_self() }
            let (thread, inLoop) = try await loop.runOnThreadPool { (pthread_self(), loop.inEventLoop) }
            #expect(thread != loopThread)
            #expect(!inLoop)
        }
    }

    @Test func theResultComesBack() async throws {
        try await withLoop { loop in
            #expect(try await loop.runOnThreadPool { 6 * 7 } == 42)
            #expect(try await loop.runOnThreadPool { Array(repeating: "x", count: 3).joined() } == "xxx")
            let nothing: Int? = try await loop.runOnThreadPool { nil }
            #expect(nothing == nil)
        }
    }

    @Test func aCallFromTheLoopThreadWorks() async throws {
        try await withLoop { loop in
            let result = await Task(executorPreference: loop) {
                let onLoop = loop.inEventLoop
                let fromPool = try? await loop.runOnThreadPool { loop.inEventLoop }
                return (onLoop, fromPool)
            }.value
            #expect(result.0)
            #expect(result.1 == false)
        }
    }

    @Test func manyConcurrentCallsAllComplete() async throws {
        try await withLoop { loop in
            let count = 200
            let results = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<count {
                    group.addTask {
                        try await loop.runOnThreadPool { index }
                    }
                }
                var results: [Int] = []
                for try await result in group { results.append(result) }
                return results
            }
            #expect(results.sorted() == Array(0..<count))
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aCallAfterShutdownThrows() async throws {
        let loop = try EventLoop(name: "pool-after-shutdown")
        #expect(try await loop.runOnThreadPool { 1 } == 1)
        loop.shutdown()
        let ran = Atomic<Bool>(false)
        await #expect(throws: EventLoopError.shutDown(loop: "pool-after-shutdown")) {
            try await loop.runOnThreadPool { ran.store(true, ordering: .relaxed) }
        }
        let workRan = ran.load(ordering: .relaxed)
        #expect(!workRan)
    }

    @Test(.timeLimit(.minutes(1)))
    func workInFlightAtShutdownFinishesAndTheLoopClosesCleanly() async throws {
        let loop = try EventLoop(name: "pool-in-flight")
        let started = Atomic<Bool>(false)
        let call = Task {
            try await loop.runOnThreadPool {
                started.store(true, ordering: .releasing)
                usleep(20_000)
                return 9
            }
        }
        while !started.load(ordering: .acquiring) { await Task.yield() }
        let report = loop.shutdown()
        #expect(report.loopClosed)
        #expect(report.handlesLeftOpen == 0)
        #expect(try await call.value == 9)
    }
}
