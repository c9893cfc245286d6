#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
@testable import MonarchCoordinator
import MonarchHTTP
import MonarchWire
import Testing

/// A hot hit for an HTTP client: HTTP's freshness worked out when the entry is kept, and the
/// response written from the head rendered then, the same as the front door writes it from
/// the message.
@Suite("Relayed hot hits")
struct RelayedHotHitTests {
    static let now = HotTierTests.now

    /// A relayed read of `key` on a route whose TTL is `ttl`.
    static func relayed(_ key: String = "GET docs a", ttl: Duration? = .seconds(60)) -> Request {
        Request(path: "a", route: RouteContext(ttl: ttl, cacheKey: key), relay: true)
    }

    /// A new tier holding a hit with `headers`, `body` and `status`, kept at ``now`` for a route whose TTL is `ttl`.
    static func tier(headers: [String: String], body: String = "hello", status: Int = 200, ttl: Duration? = .seconds(60)) -> HotTier {
        var tier = HotTier(budgetBytes: 1 << 20, entryLimitBytes: 1 << 16)
        let ticket = tier.beginRead()
        let response = Response(
            status: status, headers: headers, body: Data(body.utf8), source: "cache", age: .zero, ttl: .seconds(3600))
        let kept = tier.keep(response, for: relayed(ttl: ttl), ticket: ticket, askedAtMs: now)
        #expect(kept)
        return tier
    }

    /// The status line, the header lines (as a set: their order is the writer's) and the body of `bytes`.
    static func parts(_ bytes: [UInt8]) -> (status: String, headers: Set<String>, body: String) {
        let text = String(decoding: bytes, as: UTF8.self)
        let split = text.components(separatedBy: "\r\n\r\n")
        var lines = split[0].components(separatedBy: "\r\n")
        let status = lines.removeFirst()
        return (status, Set(lines), split.dropFirst().joined(separator: "\r\n\r\n"))
    }

    @Test("The response written from the head rendered when kept is the one the front door writes from the message")
    func rendersAsTheFrontDoorDoes() throws {
        let headers = [
            "content-type": "text/plain", "date": "Fri, 27 Nov 2026 12:00:00 GMT", "etag": "\"v1\"",
            "cache-control": "max-age=100", "age": "5", "cache-status": "upstream; hit", "via": "1.1 origin",
            "x-bad": "one\u{1}two",
        ]
        var tier = Self.tier(headers: headers)
        let answer = tier.relayedAnswer(for: "GET docs a", nowMs: Self.now + 2500, defaultLifetime: .seconds(60))
        let found = try #require(answer)
        let hit = RelayedHotHit.Hit(prepared: found.prepared, form: found.form, ageMs: found.ageMs, id: 7)
        let get = HTTPRequest(method: "GET", target: "/a", headers: [HTTPHeader(name: "Host", value: "x")])
        for closing in [false, true] {
            let fast = Self.parts(hit.httpResponse(closing: closing).joined)
            let slow = Self.parts(HTTPExchange.response(to: .message(.response(hit.message)), for: get, closing: closing))
            #expect(fast.status == "HTTP/1.1 200 OK")
            #expect(fast.status == slow.status)
            #expect(fast.headers == slow.headers)
            #expect(fast.body == "hello")
            #expect(fast.body == slow.body)
            #expect(fast.headers.contains("Age: 7"), "its Age on receipt and the 2.5 s held")
            #expect(fast.headers.contains("Cache-Status: upstream; hit, monarch; hit; ttl=93"))
            #expect(fast.headers.contains("Via: 1.1 origin, 1.1 monarch"))
            #expect(fast.headers.contains("Connection: close") == closing)
            #expect(!fast.headers.contains { $0.hasPrefix("X-Bad") }, "a header that could split the response is left out")
        }
        // The front door takes the rendered form for a plain GET, and works a conditional one out from the message.
        #expect(Self.parts(HTTPExchange.response(to: .relayedHit(hit), for: get, closing: false)).body == "hello")
        var conditional = get
        conditional.headers.append(HTTPHeader(name: "If-None-Match", value: "\"v1\""))
        #expect(Self.parts(HTTPExchange.response(to: .relayedHit(hit), for: conditional, closing: false)).status == "HTTP/1.1 304 Not Modified")
        var head = get
        head.method = "HEAD"
        #expect(Self.parts(HTTPExchange.response(to: .relayedHit(hit), for: head, closing: false)).body == "")
    }

    @Test("An answer without Date gets the time it is sent, as the front door gives it")
    func dateWhenNone() throws {
        var tier = Self.tier(headers: ["cache-control": "max-age=100"])
        let answer = tier.relayedAnswer(for: "GET docs a", nowMs: Self.now, defaultLifetime: .seconds(60))
        let found = try #require(answer)
        let hit = RelayedHotHit.Hit(prepared: found.prepared, form: found.form, ageMs: found.ageMs, id: 1)
        let dates = Self.parts(hit.httpResponse(closing: false).joined).headers.filter { $0.hasPrefix("Date: ") }
        #expect(dates.count == 1)
    }

    @Test("Freshness is HTTP's: max-age against Age and the time held, no-cache never, the route's TTL when the answer gives none")
    func freshness() {
        var maxAge = Self.tier(headers: ["cache-control": "max-age=10", "age": "4"])
        let young = maxAge.relayedAnswer(for: "GET docs a", nowMs: Self.now + 5_999, defaultLifetime: .seconds(60))
        let old = maxAge.relayedAnswer(for: "GET docs a", nowMs: Self.now + 6_000, defaultLifetime: .seconds(60))
        #expect(young != nil)
        #expect(old == nil)
        var noCache = Self.tier(headers: ["cache-control": "no-cache, max-age=100"])
        let validated = noCache.relayedAnswer(for: "GET docs a", nowMs: Self.now, defaultLifetime: .seconds(60))
        #expect(validated == nil)
        var routeTTL = Self.tier(headers: [:], ttl: .seconds(2))
        let withinTTL = routeTTL.relayedAnswer(for: "GET docs a", nowMs: Self.now + 1_999, defaultLifetime: .seconds(2))
        let pastTTL = routeTTL.relayedAnswer(for: "GET docs a", nowMs: Self.now + 2_000, defaultLifetime: .seconds(2))
        // Asked for by a route with another TTL, the entry's freshness is worked out again for it.
        let otherRoute = routeTTL.relayedAnswer(for: "GET docs a", nowMs: Self.now + 2_000, defaultLifetime: .seconds(30))
        #expect(withinTTL != nil)
        #expect(pastTTL == nil)
        #expect(otherRoute != nil)
        #expect(routeTTL.hits == 2)
    }
}

extension RelayedHotHitTests {
    @Test("A large body is held once for sending uncopied; the response is the same bytes as the front door's from the message")
    func largeBodySentUncopied() throws {
        let body = String(repeating: "0123456789abcdef", count: HotTier.sharedBodyMinimum / 16)
        var tier = HotTier(budgetBytes: 4 << 20, entryLimitBytes: 1 << 20)
        let ticket = tier.beginRead()
        let response = Response(
            status: 200, headers: ["cache-control": "max-age=100", "date": "Fri, 27 Nov 2026 12:00:00 GMT"],
            body: Data(body.utf8), source: "cache", age: .zero, ttl: .seconds(3600))
        let kept = tier.keep(response, for: Self.relayed(), ticket: ticket, askedAtMs: Self.now)
        #expect(kept)
        let answer = tier.relayedAnswer(for: "GET docs a", nowMs: Self.now, defaultLifetime: .seconds(60))
        let found = try #require(answer)
        let shared = try #require(found.sharedBody, "a body of \(body.utf8.count) bytes is held for sending uncopied")
        #expect(shared.count == body.utf8.count)
        let hit = RelayedHotHit.Hit(prepared: found.prepared, form: found.form, ageMs: found.ageMs, id: 3, sharedBody: shared)
        let get = HTTPRequest(method: "GET", target: "/a", headers: [HTTPHeader(name: "Host", value: "x")])
        let output = HTTPExchange.output(to: .relayedHit(hit), for: get, closing: false)
        #expect(output.sharedBody === shared, "the body follows the head as the hot tier holds it")
        #expect(String(decoding: output.bytes, as: UTF8.self).hasSuffix("\r\n\r\n"), "the bytes before it are the head alone")
        let fast = Self.parts(output.joined)
        let slow = Self.parts(HTTPExchange.response(to: .message(.response(hit.message)), for: get, closing: false))
        #expect(fast.status == slow.status)
        #expect(fast.headers == slow.headers)
        #expect(fast.body == body)
        // A small body is copied with the head instead.
        var small = Self.tier(headers: ["cache-control": "max-age=100"])
        let smallAnswer = small.relayedAnswer(for: "GET docs a", nowMs: Self.now, defaultLifetime: .seconds(60))
        let smallFound = try #require(smallAnswer)
        #expect(smallFound.sharedBody == nil)
    }
}
