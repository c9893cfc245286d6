#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
import Testing

/// Issue 26, finding 5: answers kept by what varies (`Vary`, the route's keyed headers), and
/// requests with credentials passing the caches by unless their route is public.
@Suite(.timeLimit(.minutes(1))) struct VaryAndCredentialsTests {
    let log = CallLog()

    @Test("A read with credentials passes the caches by (never answered from an anonymous entry) and is not written back", arguments: [
        "Authorization", "cookie", "X-API-KEY",
    ])
    func credentialsPassCachesBy(header: String) async throws {
        let probe = StoreProbe()
        let subject = chain(
            StoringProvider("cache", .response(Response(body: Data("anonymous".utf8))), log: log, probe: probe),
            StubProvider("network", ok("you are alice"), log: log))
        let response = try await subject.perform(Request(path: "me", headers: [header: "alice"]))
        #expect(response.body == Data("you are alice".utf8))
        #expect(await log.calls == ["network"])
        // Write-backs run in the background: a later one reaching the probe first shows none came before it.
        let sentinel = chain(StoringProvider("cache", log: log, probe: probe), StubProvider("origin", ok("s"), log: log))
        _ = try await sentinel.perform(Request(path: "sentinel"))
        var stored = probe.stream.makeAsyncIterator()
        #expect(try #require(await stored.next()).path == "sentinel")
    }

    @Test("On a public route a read with credentials is answered from the cache, and its answer is kept")
    func publicRouteShares() async throws {
        let probe = StoreProbe()
        let cached = chain(
            StoringProvider("cache", .response(Response(body: Data("the logo".utf8))), log: log, probe: probe),
            StubProvider("network", ok("fetched"), log: log))
        let route = RouteContext(cacheKey: "GET assets logo", isPublic: true)
        let hit = try await cached.perform(Request(path: "logo", headers: ["Cookie": "sid=1"], route: route))
        #expect(hit.body == Data("the logo".utf8))

        let missing = chain(StoringProvider("cache", log: log, probe: probe), StubProvider("network", ok("fetched"), log: log))
        _ = try await missing.perform(Request(path: "logo", headers: ["Authorization": "Bearer x"], route: route))
        var stored = probe.stream.makeAsyncIterator()
        #expect(try #require(await stored.next()).response.body == Data("fetched".utf8))
    }

    @Test("An answer that varies on request headers is written back (as a variant), with the request's values of them")
    func varyingAnswerIsStored() async throws {
        let probe = StoreProbe()
        let french = Response(headers: ["Vary": "Accept-Language"], body: Data("bonjour".utf8))
        let subject = chain(StoringProvider("cache", log: log, probe: probe), StubProvider("network", .response(french), log: log))
        let request = Request(path: "hello", headers: ["Accept-Language": "fr"])
        _ = try await subject.perform(request)
        var stored = probe.stream.makeAsyncIterator()
        let kept = try #require(await stored.next())
        #expect(kept.response.body == Data("bonjour".utf8))
        #expect(SharingRules.storedVariant(of: kept.response, for: request) == "accept-language:fr")
    }

    @Test("A stored variant answers only requests whose values of its varied headers match, normalised")
    func variantsMatch() {
        let response = Response(headers: ["vary": "Accept-Language, accept-encoding, Accept"])
        let variant = SharingRules.storedVariant(of: response, for: Request(
            path: "a", headers: ["Accept-Language": "fr, en;q=0.5", "Accept-Encoding": "gzip"]))
        #expect(variant == "accept\naccept-language:fr,en;q=0.5")
        #expect(SharingRules.matches(storedVariant: variant, headers: ["accept-language": "FR ,  en;q=0.5"]))
        #expect(!SharingRules.matches(storedVariant: variant, headers: ["accept-language": "en"]))
        #expect(!SharingRules.matches(storedVariant: variant, headers: [:]))
        #expect(!SharingRules.matches(
            storedVariant: variant, headers: ["accept-language": "fr,en;q=0.5", "accept": "application/json"]))
        #expect(SharingRules.matches(storedVariant: nil, headers: ["accept-language": "en"]))
        #expect(SharingRules.storedVariant(of: Response(headers: ["Vary": "Accept-Encoding"]), for: Request(path: "a")) == nil)
        #expect(!SharingRules.mayStore(Response(headers: ["Vary": "*"]), for: Request(path: "a")))
        // What may go to every caller of a key without a look at their headers.
        #expect(SharingRules.mayServeToEveryCaller(Response(headers: ["Vary": "Accept-Encoding"]), for: Request(path: "a")))
        #expect(!SharingRules.mayServeToEveryCaller(response, for: Request(path: "a")))
        #expect(!SharingRules.mayServeToEveryCaller(Response(), for: Request(path: "a", route: RouteContext(keyedHeaders: ["x-tenant"]))))
        #expect(!SharingRules.mayServeToEveryCaller(Response(), for: Request(path: "a", headers: ["Cookie": "s=1"])))
    }

    @Test("A route's keyed headers make a read with them shareable, key its answers and reach the upstream; unkeyed tracing ids do not")
    func keyedHeaders() {
        let route = RouteContext(keyedHeaders: ["x-tenant"])
        let acme = Request(path: "a", headers: ["X-Tenant": "acme", "X-Request-Id": "r-1", "Accept": "text/html"], route: route)
        #expect(acme.isShareable)
        #expect(!Request(path: "a", headers: ["X-Tenant": "acme"]).isShareable)
        #expect(acme.negotiationVariant == "accept:text/html\nx-tenant:acme")
        #expect(SharingRules.storedVariant(of: Response(), for: acme) == "x-tenant:acme")
        #expect(SharingRules.upstreamHeaders(of: acme) == ["X-Tenant": "acme", "Accept": "text/html"])
        // A request that shares nothing carries every header.
        let personal = Request(path: "a", headers: ["Authorization": "Bearer x", "X-Request-Id": "r-2"])
        #expect(SharingRules.upstreamHeaders(of: personal) == personal.headers)
        // A route that keys a tracing id forwards it.
        let traced = Request(path: "a", headers: ["traceparent": "00-1"], route: RouteContext(keyedHeaders: ["traceparent"]))
        #expect(SharingRules.upstreamHeaders(of: traced) == ["traceparent": "00-1"])
    }
}
