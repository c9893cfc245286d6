import Foundation
import Monarch
import MonarchClient
import MonarchWire
import Testing

/// Deadlines and cancellation reach the worker: it stops working on requests nobody waits for.
@Suite("Deadlines and cancellation")
struct DeadlineTests {
    @Test("Route timeout and client deadline give deadlineExceeded; the worker is told to stop")
    func deadlines() async throws {
        // The worker holds each answer 20 s: its load only drops sooner if the cancel reaches it.
        try await TestCluster.with(ClusterOptions(bundleCount: 1, latency: "20s")) { cluster in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }

            // slow/... has `timeout: 300ms`.
            let routeTimeout = try #require(try await perform(client, Request(path: "slow/a.txt")).failure)
            #expect(routeTimeout.code == .deadlineExceeded)
            try await eventually("the worker to drop the request after the route's deadline", timeout: 10) {
                let status = try await cluster.status(via: client)
                return status.forwarded == 1 && status.inFlight == 0 && status.requestsInFlight == 0
            }

            // docs/... has the default 30 s; the client asks for 400 ms.
            let clientDeadline = try #require(
                try await perform(client, Request(path: "docs/hello.txt", deadline: .milliseconds(400))).failure)
            #expect(clientDeadline.code == .deadlineExceeded)
            try await eventually("the worker to drop the request after the client's deadline", timeout: 10) {
                let status = try await cluster.status(via: client)
                return status.forwarded == 2 && status.inFlight == 0 && status.bundleWorkers.first?.answered == 2
            }
        }
    }

    @Test("Cancelling the calling task gives cancelled; the worker is told; the connection goes on")
    func cancellation() async throws {
        try await TestCluster.with(ClusterOptions(bundleCount: 1, latency: "6s")) { cluster in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }

            // Two requests pipelined on one connection; the first one is cancelled.
            let doomed = Task { await outcome(client, Request(path: "docs/hello.txt")) }
            let survivor = Task { await outcome(client, Request(path: "docs/other.txt")) }
            try await eventually("both requests to reach the worker") {
                try await cluster.status(via: client).inFlight == 2
            }
            doomed.cancel()
            let cancelled = try await within(10, "the cancelled request's answer") { await doomed.value }
            guard let error = cancelled.failure?.chainError else {
                Issue.record("expected a cancelled chain error, got \(cancelled)")
                return
            }
            #expect(error.code == .cancelled)
            // The worker answers the cancelled request at once (the other one still waits out its latency).
            try await eventually("the worker to answer the cancelled request", timeout: 4) {
                let status = try await cluster.status(via: client)
                return status.inFlight == 1 && status.bundleWorkers.first?.answered == 1
            }
            // A new request on the same connection still works, alongside the one in flight.
            let again = Task { await outcome(client, Request(path: "docs/guide/intro.md")) }
            let other = try await within(30, "the other request's answer") { await survivor.value }
            #expect(other.success?.status == 200, "\(other)")
            #expect(other.success?.body == Data(ClusterOptions.files["docs/other.txt"]!))
            let third = try await within(30, "the third request's answer") { await again.value }
            #expect(third.success?.status == 200, "\(third)")
            #expect(third.success?.body == Data(ClusterOptions.files["docs/guide/intro.md"]!))
        }
    }

    @Test("A task already cancelled when it asks gets cancelled, not the response")
    func cancelledBeforeAsking() async throws {
        try await TestCluster.with(ClusterOptions(bundleCount: 1, latency: "3s")) { cluster in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            for attempt in 0..<3 {
                let gate = AsyncStream<Void>.makeStream()
                let asking = Task { () async -> Result<Response, MonarchError> in
                    for await _ in gate.stream {}
                    return await outcome(client, Request(path: "docs/hello.txt?attempt=\(attempt)"))
                }
                asking.cancel()
                gate.continuation.finish()
                let answer = try await within(30, "the answer") { await asking.value }
                guard let error = answer.failure?.chainError else {
                    Issue.record("attempt \(attempt): expected a cancelled chain error, got \(answer)")
                    continue
                }
                #expect(error.code == .cancelled)
            }
            try await eventually("the worker to have nothing in flight") {
                try await cluster.status(via: client).inFlight == 0
            }
        }
    }

    @Test("A request cancelled as soon as it arrives does not leave its trip running at the worker")
    func cancelledOnArrival() async throws {
        // The worker holds each answer 20 s: its load only drops sooner if the cancel reaches it.
        try await TestCluster.with(ClusterOptions(bundleCount: 1, latency: "20s")) { cluster in
            let raw = try RawSocket(path: cluster.folder.path + "/c.sock")
            guard case .welcome? = try raw.greet() else {
                Issue.record("no welcome")
                return
            }
            // The request and its cancel in one write: the coordinator reads both in one go.
            let codec = MessageCodec()
            var bytes: [UInt8] = []
            for message in [WireMessage.request(RequestMessage(id: 1, path: "docs/hello.txt")), .cancel(CancelMessage(id: 1))] {
                let payload = codec.encode(message)
                let length = UInt32(payload.count)
                bytes += [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
                bytes += payload
            }
            raw.write(bytes)
            guard case .failure(let failure)? = try raw.nextMessage() else {
                Issue.record("expected a failure")
                return
            }
            #expect(failure.id == 1)
            #expect(failure.error.code == "cancelled")
            // Without a cancel the worker would hold the request for 20 s. A fixed wait remains:
            // it gives a trip that wrongly goes on after the answer the time to reach the worker,
            // and no event follows a forward that was rightly never made.
            try await Task.sleep(for: .milliseconds(500))
            try await eventually("the worker to be told to stop", timeout: 5) {
                let status = try await cluster.status()
                return status.inFlight == 0
            }
        }
    }
}
