#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
import MonarchWire
import Testing

@Suite struct WireMappingTests {
    let codec = MessageCodec()

    static let fullRequest = Request(
        path: "users/1", query: [QueryItem(name: "page", value: "2"), QueryItem(name: "flag", value: nil), QueryItem(name: "page", value: "3")],
        method: "POST", headers: ["Accept": "application/json"], body: Data([0, 1, 2, 255]), policy: .networkFirst,
        deadline: .milliseconds(1500),
        route: RouteContext(
            parameters: ["id": "1"], upstream: "http://127.0.0.1:8080/users/1", ttl: .seconds(60), cacheKey: "GET users/1"))

    // MARK: Requests

    @Test("a request becomes a request message with every field")
    func requestToMessage() throws {
        var request = Self.fullRequest
        request.domain = "api"
        let message = try request.message(id: 7)
        #expect(message == RequestMessage(
            id: 7, path: "users/1", domain: "api", query: Self.fullRequest.query, method: "POST",
            headers: ["Accept": "application/json"], body: Data([0, 1, 2, 255]), policy: .networkFirst,
            deadlineMs: 1500, params: ["id": "1"], upstream: "http://127.0.0.1:8080/users/1", ttlMs: 60000,
            key: "GET users/1"))
    }

    @Test("Request -> RequestMessage -> Request keeps every field", arguments: [
        fullRequest,
        Request(path: "a"),
        Request(path: "assets/logo.png", method: "HEAD", policy: .noCache, deadline: .seconds(5)),
        Request(path: "x", body: Data(), route: RouteContext(cacheKey: "k")),
    ])
    func requestRoundTrip(_ request: Request) throws {
        #expect(Request(try request.message(id: 1)) == request)
        // And through the JSON the wire carries, with a domain.
        var request = request
        request.domain = "api"
        let decoded = try codec.decode(codec.encode(.request(try request.message(id: 1))))
        guard case .request(let message) = decoded else {
            Issue.record("decoded \(decoded.type), not request")
            return
        }
        #expect(message.domain == "api")
        #expect(Request(message) == request)
    }

    @Test("a plain request leaves the optional message fields out")
    func minimalMessage() throws {
        #expect(try Request(path: "a").message(id: 3) == RequestMessage(id: 3, path: "a"))
    }

    @Test("a request from a message is in the domain it names, GET unless told, and clamps huge durations")
    func requestFromMessage() {
        let request = Request(RequestMessage(id: 1, path: "a", domain: "api", deadlineMs: .max, ttlMs: .max))
        #expect(request.domain == "api")
        #expect(Request(RequestMessage(id: 1, path: "a")).domain == .any)
        #expect(request.method == "GET")
        #expect(request.deadline == .milliseconds(Int64.max))
        #expect(request.route.ttl == .milliseconds(Int64.max))
        #expect(request.deadline?.wholeMilliseconds == UInt64(Int64.max))
    }

    @Test("durations below a millisecond travel as whole milliseconds, rounded down")
    func subMillisecondDeadline() throws {
        let request = Request(path: "a", deadline: .microseconds(2_999), route: RouteContext(ttl: .nanoseconds(5)))
        let message = try request.message(id: 1)
        #expect(message.deadlineMs == 2)
        #expect(message.ttlMs == 0)
    }

    // MARK: Responses

    @Test("Response <-> ResponseMessage keeps status, headers, body, source, stale, age, TTL and cacheable")
    func responseRoundTrip() throws {
        let response = Response(
            status: 203, headers: ["content-type": "text/plain"], body: Data("hi".utf8), source: "cache", stale: true,
            age: .milliseconds(1200), ttl: .seconds(60), cacheable: false)
        let message = response.message(id: 9)
        #expect(message == ResponseMessage(
            id: 9, status: 203, source: "cache", headers: ["content-type": "text/plain"], body: Data("hi".utf8),
            stale: true, ageMs: 1200, ttlMs: 60000, cacheable: false))
        #expect(Response(message) == response)

        let decoded = try codec.decode(codec.encode(.response(message)))
        #expect(decoded == .response(message))
    }

    @Test("header names are lowercase on the wire both ways: response and store messages, sent and received")
    func headerNamesAreLowercase() {
        let mixed = ["Content-Type": "text/plain", "ETag": "\"v1\"", "x-trace": "a"]
        let lowercase = ["content-type": "text/plain", "etag": "\"v1\"", "x-trace": "a"]
        #expect(Response(headers: mixed).message(id: 1).headers == lowercase)
        #expect(Response(ResponseMessage(id: 1, status: 200, headers: mixed)).headers == lowercase)
        #expect(Response(headers: mixed).storeMessage(id: 2, key: "k", ttl: nil).headers == lowercase)
        #expect(Response(StoreMessage(id: 2, key: "k", status: 200, headers: mixed)).headers == lowercase)
    }

    @Test("names differing only in case become one header, values joined in name order")
    func headerNamesDifferingInCaseAreJoined() {
        #expect(Response.lowercasedHeaderNames(["Vary": "Accept", "vary": "Origin", "VARY": "Cookie"])
            == ["vary": "Cookie, Accept, Origin"])
        #expect(Response.lowercasedHeaderNames([:]) == [:])
        #expect(Response.lowercasedHeaderNames(["a-b": "1"]) == ["a-b": "1"])
    }

    @Test("only the capitals A to Z make a name change: the bytes beside them in ASCII and other letters stay")
    func onlyCapitalsAreLowered() {
        let bystanders = ["x@y": "1", "x[y": "2", "x`y": "3", "x{y": "4", "é-ñ": "5"]
        #expect(Response.lowercasedHeaderNames(bystanders) == bystanders)
        #expect(Response.lowercasedHeaderNames(["xA": "1"]) == ["xa": "1"])
        #expect(Response.lowercasedHeaderNames(["xZ": "1", "x@y": "2"]) == ["xz": "1", "x@y": "2"])
    }

    @Test("a fresh, cacheable response leaves the defaults out, and absent fields read as the defaults")
    func responseDefaults() {
        let message = Response().message(id: 2)
        #expect(message == ResponseMessage(id: 2, status: 200))
        let response = Response(ResponseMessage(id: 2, status: 404))
        #expect(response == Response(status: 404))
        #expect(!response.stale)
        #expect(response.cacheable)
        #expect(response.age == nil && response.ttl == nil && response.source == nil)
        #expect(response.body.isEmpty)
    }

    // MARK: Provider outcomes

    @Test("a response outcome becomes a response message with the source filled in")
    func responseOutcome() {
        let bare = ProviderOutcome.response(Response(body: Data("x".utf8)))
        #expect(bare.message(id: 4, source: "bundle") == .response(ResponseMessage(id: 4, status: 200, source: "bundle", body: Data("x".utf8))))
        let own = ProviderOutcome.response(Response(source: "cdn"))
        #expect(own.message(id: 4, source: "network") == .response(ResponseMessage(id: 4, status: 200, source: "cdn")))
    }

    @Test("a miss outcome becomes a miss message with the source and reason")
    func missOutcome() {
        #expect(ProviderOutcome.miss(reason: "no such file").message(id: 5, source: "bundle")
            == .miss(MissMessage(id: 5, source: "bundle", reason: "no such file")))
        #expect(ProviderOutcome.miss(reason: nil).message(id: 5, source: "cache") == .miss(MissMessage(id: 5, source: "cache")))
    }

    @Test("a failure outcome becomes a failure message with the code, message and the source's attempt")
    func failureOutcome() throws {
        let failure = ProviderFailure(code: "unavailable", message: "connection refused")
        let wire = ProviderOutcome.failure(failure).message(id: 6, source: "network")
        guard case .failure(let message) = wire else {
            Issue.record("expected a failure message, got \(wire.type)")
            return
        }
        #expect(message.id == 6)
        #expect(message.error.code == "unavailable")
        #expect(message.error.message == "connection refused")
        #expect(message.error.attempts == [
            ProviderAttempt(provider: "network", outcome: .failure, code: "unavailable", message: "connection refused"),
        ])

        let cancelled = ProviderOutcome.failure(.cancelled).message(id: 6, source: "network")
        guard case .failure(let cancelledMessage) = cancelled else {
            Issue.record("expected a failure message, got \(cancelled.type)")
            return
        }
        #expect(cancelledMessage.error.attempts?.first?.outcome == .cancelled)
    }

    // MARK: Duration.wholeMilliseconds

    @Test("wholeMilliseconds rounds down", arguments: [
        (Duration.zero, UInt64(0)),
        (.nanoseconds(1), 0),
        (.microseconds(999), 0),
        (.milliseconds(1), 1),
        (.microseconds(1_999), 1),
        (.seconds(1), 1000),
        (.milliseconds(1500), 1500),
        (.nanoseconds(2_999_999_999), 2999),
        (.seconds(86_400), 86_400_000),
    ])
    func wholeMilliseconds(_ duration: Duration, _ expected: UInt64) {
        #expect(duration.wholeMilliseconds == expected)
    }

    @Test("wholeMilliseconds of a negative duration is 0", arguments: [
        Duration.nanoseconds(-1), .milliseconds(-500), .microseconds(-1_500), .seconds(-1), .milliseconds(-1500),
        .seconds(Int64.min),
    ])
    func negativeMilliseconds(_ duration: Duration) {
        #expect(duration.wholeMilliseconds == 0)
    }

    @Test("wholeMilliseconds of a huge duration saturates instead of trapping or wrapping", arguments: [
        Duration.seconds(Int64.max),
        .seconds(Int64.max / 2),
        .seconds(UInt64.max / 1000 + 1),
        // The largest whole second that fits, plus 999 ms: the sum no longer fits.
        .seconds(UInt64.max / 1000) + .milliseconds(999),
    ])
    func hugeMilliseconds(_ duration: Duration) {
        #expect(duration.wholeMilliseconds == .max)
    }

    @Test("the largest duration that fits in milliseconds is exact")
    func largestExact() {
        let seconds = UInt64.max / 1000
        #expect((Duration.seconds(seconds) + .milliseconds(615)).wholeMilliseconds == UInt64.max)
        #expect((Duration.seconds(seconds) + .milliseconds(614)).wholeMilliseconds == UInt64.max - 1)
        #expect(Duration.seconds(seconds).wholeMilliseconds == seconds * 1000)
    }
}
