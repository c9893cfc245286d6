#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
import Synchronization
import Testing
import TestWaiting

@Suite("Which answers may be shared and kept")
struct SharingTests {
    @Test("Headers are neutral, tracing, negotiation, credential or personal; unknown ones are personal", arguments: [
        ("Accept-Encoding", HeaderRole.neutral), ("X-Request-Id", .tracing), ("traceparent", .tracing),
        ("X-B3-TraceId", .tracing), ("Cache-Control", .neutral), ("Connection", .neutral),
        ("Accept", .negotiation), ("accept-language", .negotiation), ("User-Agent", .negotiation),
        ("Authorization", .credential), ("Cookie", .credential), ("Range", .personal), ("If-None-Match", .personal),
        ("X-Api-Key", .credential), ("X-Whatever", .personal), ("Proxy-Authorization", .credential),
    ])
    func headerRoles(name: String, role: HeaderRole) {
        #expect(HeaderRole(name: name) == role)
    }

    @Test("A read is shareable only with neutral and negotiation headers and no body")
    func shareableRequests() {
        #expect(Request(path: "a").isShareable)
        #expect(Request(path: "a", method: "HEAD").isShareable)
        #expect(Request(path: "a", headers: ["Accept": "application/json", "X-Request-Id": "1"]).isShareable)
        #expect(!Request(path: "a", headers: ["X-Api-Key": "alice-secret"]).isShareable)
        #expect(!Request(path: "a", headers: ["authorization": "Bearer x"]).isShareable)
        #expect(!Request(path: "a", headers: ["If-Modified-Since": "Mon, 01 Jan 2024 00:00:00 GMT"]).isShareable)
        #expect(!Request(path: "a", body: Data("q".utf8)).isShareable)
        #expect(Request(path: "a", body: Data()).isShareable)
        #expect(!Request(path: "a", method: "POST").isShareable)
    }

    @Test("The negotiation variant names the negotiation headers only, in one order, names lowercased")
    func negotiationVariant() {
        let json = Request(path: "a", headers: ["Accept": "application/json", "X-Request-Id": "7", "User-Agent": "x/1"])
        #expect(json.negotiationVariant == "accept:application/json\nuser-agent:x/1")
        let sameOtherCase = Request(path: "a", headers: ["user-agent": "x/1", "accept": "application/json"])
        #expect(sameOtherCase.negotiationVariant == json.negotiationVariant)
        #expect(Request(path: "a", headers: ["Accept": "application/xml"]).negotiationVariant != json.negotiationVariant)
        #expect(Request(path: "a", headers: ["X-Request-Id": "7"]).negotiationVariant == "")
    }

    @Test("An answer may be shared with joiners unless it is private, sets a cookie or varies on a request header; stored unless private, a cookie or Vary: *", arguments: [
        ([:], true, true, true),
        (["Vary": "Accept-Encoding"], true, true, true),
        (["Cache-Control": "public, max-age=60"], true, true, true),
        (["Cache-Control": "max-age=60, Private"], true, false, false),
        (["cache-control": "private=\"set-cookie\""], true, false, false),
        (["Cache-Control": "no-store"], true, false, false),
        (["Set-Cookie": "sid=alice-secret"], true, false, false),
        (["SET-COOKIE2": "sid=alice-secret", "Content-Type": "text/plain"], true, false, false),
        (["Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT", "Date": "Mon, 01 Jan 2024 00:00:00 GMT"], true, true, true),
        (["Vary": "Accept"], true, false, true),
        (["vary": "accept-encoding, X-Api-Key"], true, false, true),
        (["Vary": "*"], true, false, false),
        (["Vary": "Accept, *"], true, false, false),
        ([:], false, false, false),
    ] as [([String: String], Bool, Bool, Bool)])
    func shareableAnswers(headers: [String: String], cacheable: Bool, shared: Bool, stored: Bool) {
        let response = Response(headers: headers, body: Data("x".utf8), cacheable: cacheable)
        #expect(response.mayBeShared == shared)
        #expect(response.mayBeStored == stored)
    }

    @Test("A stale or partial answer may be shared with joiners but is never stored")
    func sharedButNotStored() {
        let stale = Response(body: Data("old".utf8), stale: true)
        #expect(stale.mayBeShared && !stale.mayBeStored)
        let partial = Response(status: 206, body: Data("pa".utf8))
        #expect(partial.mayBeShared && !partial.mayBeStored)
        let notFound = Response(status: 404)
        #expect(notFound.mayBeShared && !notFound.mayBeStored)
    }
}

@Suite("Background work")
struct BackgroundWorkTests {
    @Test("At most limit tasks run; work beyond is dropped and counted, never queued")
    func bounded() async throws {
        let work = BackgroundWork(limit: 2)
        let gate = AsyncStream<Void>.makeStream()
        let release = gate.continuation
        let holding = { @Sendable in for await _ in gate.stream { return } }
        #expect(work.start(holding))
        #expect(work.start(holding))
        #expect(!work.start { })
        #expect(work.running == 2)
        #expect(work.dropped == 1)
        #expect(work.started == 2)
        release.finish()
        try await eventually("the running work to end", timeout: 5) { work.running == 0 }
        #expect(work.start { })
    }

    @Test("Drain waits for running work, then cancels what outlives the timeout, and takes no more")
    func drain() async throws {
        let work = BackgroundWork(limit: 4)
        let finished = Counter()
        work.start {
            try? await Task.sleep(for: .milliseconds(50))
            finished.add()
        }
        work.start {
            // Runs until cancelled.
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(10)) }
            finished.add()
        }
        let start = ContinuousClock.now
        await work.drain(timeout: .milliseconds(300))
        #expect(ContinuousClock.now - start >= .milliseconds(300))
        #expect(finished.value == 2)
        #expect(work.running == 0)
        #expect(!work.start { })
    }

    @Test("A drain told to stop waiting cancels the running work at once instead of waiting for it")
    func impatientDrain() async throws {
        let work = BackgroundWork(limit: 4)
        let completed = Counter()
        let cancelled = Counter()
        work.start {
            // Would complete after 20 s: a drain that waited would let it.
            try? await Task.sleep(for: .seconds(20))
            if Task.isCancelled { cancelled.add() } else { completed.add() }
        }
        work.stopWaiting()
        await work.drain(timeout: .seconds(60))
        #expect(cancelled.value == 1)
        #expect(completed.value == 0)
        #expect(work.running == 0)
    }
}

/// A count shared by tasks.
final class Counter: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
