import Foundation
import MonarchLoop
import Synchronization
import Testing

/// `LoopPoll`, the libuv poll the multi watches libcurl's sockets with.
@Suite struct LoopPollTests {
    /// Runs `body` with a connected pair of Unix sockets and a fresh loop; afterwards closes the
    /// sockets and checks that the loop shut down with no handle left.
    private func withSocketPair(_ body: (EventLoop, Int32, Int32) async throws -> Void) async throws {
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        let loop = try EventLoop(name: "poll-test")
        defer {
            close(pair[0])
            close(pair[1])
        }
        try await body(loop, pair[0], pair[1])
        let report = loop.shutdown()
        #expect(report.handlesLeftOpen == 0)
        #expect(report.loopClosed)
    }

    /// Starts a poll for `events` on `socket`, runs `trigger` on the loop, and returns the first
    /// report; the poll is then closed.
    private func firstReport(
        on loop: EventLoop, socket: Int32, events: LoopPoll.Events, trigger: @escaping @Sendable () -> Void = {}
    ) async throws -> LoopPoll.Events {
        let poll = try await loop.submit { try LoopPoll(socket: socket, on: loop) }
        let ready = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<LoopPoll.Events, any Error>) in
            loop.execute {
                do {
                    try poll.start(events: events) { result in
                        poll.stop()
                        continuation.resume(with: result)
                    }
                    trigger()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
        await poll.closeAndWait()
        return ready
    }

    @Test func reportsReadabilityOnceDataArrives() async throws {
        try await withSocketPair { loop, mine, theirs in
            let ready = try await firstReport(on: loop, socket: mine, events: [.readable]) {
                _ = write(theirs, "x", 1)
            }
            #expect(ready == .readable)
        }
    }

    @Test func reportsWritabilityOfAnEmptySocket() async throws {
        try await withSocketPair { loop, mine, _ in
            try #expect(await firstReport(on: loop, socket: mine, events: [.readable, .writable]) == .writable)
        }
    }

    @Test func startingWithTheSameEventsOnlyReplacesTheCallback() async throws {
        try await withSocketPair { loop, mine, theirs in
            let poll = try await loop.submit { try LoopPoll(socket: mine, on: loop) }
            let firstCalled = Atomic<Bool>(false)
            let (ready, watching) = try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<(LoopPoll.Events, LoopPoll.Events), any Error>) in
                loop.execute {
                    do {
                        try poll.start(events: [.readable]) { _ in firstCalled.store(true, ordering: .relaxed) }
                        try poll.start(events: [.readable]) { result in
                            let watching = poll.watchedEvents
                            poll.stop()
                            continuation.resume(with: result.map { ($0, watching) })
                        }
                        _ = write(theirs, "z", 1)
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
            #expect(ready == .readable)
            #expect(watching == .readable)
            let replacedWasCalled = firstCalled.load(ordering: .relaxed)
            #expect(!replacedWasCalled, "the replaced callback is never called")
            #expect(try await loop.submit { poll.watchedEvents.isEmpty && !poll.isWatching })
            await poll.closeAndWait()
        }
    }

    @Test func aSocketCanBeWatchedAgainRightAfterItsPollCloses() async throws {
        try await withSocketPair { loop, mine, theirs in
            // libcurl may reuse a socket number before the old poll's close completes.
            let reopened = try await loop.submit {
                let first = try LoopPoll(socket: mine, on: loop)
                try first.start(events: [.readable]) { _ in }
                first.close()
                return try LoopPoll(socket: mine, on: loop)
            }
            let ready = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<LoopPoll.Events, any Error>) in
                loop.execute {
                    do {
                        try reopened.start(events: [.readable]) { result in
                            reopened.stop()
                            continuation.resume(with: result)
                        }
                        _ = write(theirs, "y", 1)
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
            #expect(ready == .readable)
            await reopened.closeAndWait()
        }
    }
}
