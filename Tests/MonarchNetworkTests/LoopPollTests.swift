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

    @Test func aPollStoppedByAnErrorWatchesAgainWhenStartedWithTheSameEvents() async throws {
        // A datagram to a closed port leaves a connected UDP socket in error (ECONNREFUSED)
        // until the error is read; libuv reports it and stops the poll. Starting the poll again
        // for the same events must watch again (and report the error again), not take the poll
        // for one still watching.
        let port = try unusedPort()
        let socket = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        #expect(socket >= 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(connected == 0)
        #expect(send(socket, "x", 1, 0) == 1)
        let loop = try EventLoop(name: "poll-error-test")
        let poll = try await loop.submit { try LoopPoll(socket: socket, on: loop) }
        let giveUp = try await loop.submit { try LoopTimer(on: loop) }
        for round in 1...2 {
            let (report, watching) = try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<(Result<LoopPoll.Events, UVError>?, Bool), any Error>) in
                loop.execute {
                    let resumed = LoopBound(false, loop: loop)
                    @Sendable func finish(_ report: Result<LoopPoll.Events, UVError>?) {
                        guard !resumed.value else { return }
                        resumed.value = true
                        giveUp.stop()
                        continuation.resume(returning: (report, poll.isWatching))
                    }
                    do {
                        // Not stopped here: the error stops it.
                        try poll.start(events: [.readable]) { finish($0) }
                        // A poll that was never registered again would wait for ever.
                        giveUp.start(afterMs: 10_000) { finish(nil) }
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
            guard let report else {
                Issue.record("round \(round): the poll started again reported nothing")
                break
            }
            #expect({ if case .failure = report { true } else { false } }(), "round \(round): \(report)")
            #expect(!watching, "round \(round): a poll an error stopped says it is stopped")
        }
        await giveUp.closeAndWait()
        await poll.closeAndWait()
        let report = loop.shutdown()
        #expect(report.handlesLeftOpen == 0)
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
