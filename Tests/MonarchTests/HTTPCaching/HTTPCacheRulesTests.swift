import Monarch
import Testing

@Suite struct HTTPCacheRulesTests {
    let date = "Fri, 27 Nov 2026 11:54:14 GMT"

    @Test func directivesKeepQuotedTextWholeAndReadSecondsStrictly() {
        let quoted = CacheDirectives(#"extension="max-age=3600", max-age=1"#)
        #expect(quoted.seconds("max-age") == 1)
        #expect(CacheDirectives("max-age=003600").seconds("max-age") == 3600)
        #expect(CacheDirectives("max-age='3600'").seconds("max-age") == nil)
        #expect(CacheDirectives("max-age=3600.0").seconds("max-age") == nil)
        #expect(CacheDirectives("max-age =3600").seconds("max-age") == nil)
        #expect(CacheDirectives("max-age= 3600").seconds("max-age") == nil)
        #expect(CacheDirectives("nO-StOrE").has("no-store"))
        #expect(CacheDirectives("max-age=1, max-age=1800").seconds("max-age") == 0)
        #expect(CacheDirectives("max-age=99999999999").seconds("max-age") == 1 << 31)
    }

    @Test func structuredFieldsThatAreInvalidAreRefusedWhole() {
        #expect(CacheDirectives(structuredField: "max-age=10000, &&&&&") == nil)
        #expect(CacheDirectives(structuredField: #"max-age="10000""#) == nil)
        #expect(CacheDirectives(structuredField: "max-age=10000, no-store")?.seconds("max-age") == 10000)
        #expect(CacheDirectives(structuredField: "max-age=10000;foo=bar, private")?.has("private") == true)
    }

    @Test func datesAreReadInTheirThreeFormsAndNothingElse() {
        let seconds: Int64 = 784_111_777
        #expect(HTTPDate.seconds("Sun, 06 Nov 1994 08:49:37 GMT") == seconds)
        #expect(HTTPDate.seconds("Sunday, 06-Nov-94 08:49:37 GMT") == seconds)
        #expect(HTTPDate.seconds("Sun Nov  6 08:49:37 1994") == seconds)
        #expect(HTTPDate.seconds("Sun, 06 Nov 1994 08:49:37 UTC") == nil)
        #expect(HTTPDate.seconds("Sun, 06 Nov 94 08:49:37 GMT") == nil)
        #expect(HTTPDate.seconds("Sun 06 Nov 1994 08:49:37 GMT") == nil)
        #expect(HTTPDate.seconds("Sun, 06  Nov 1994 08:49:37 GMT") == nil)
        #expect(HTTPDate.seconds("Sun, 06-Nov-1994 08:49:37 GMT") == nil)
        #expect(HTTPDate.seconds("Sun, 06 Nov 1994 8:49:37 GMT") == nil)
        #expect(HTTPDate.seconds("0") == nil)
        #expect(HTTPDate.string(fromSeconds: seconds) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    @Test func lifetimePrefersSharedMaxAgeThenMaxAgeThenExpires() throws {
        let now = try #require(HTTPDate.seconds(date))
        func lifetime(_ headers: [String: String], status: Int = 200) -> Int64 {
            HTTPCacheRules.freshnessLifetime(headers: headers, status: status, receivedAt: now, defaultLifetime: nil)
        }
        #expect(lifetime(["cache-control": "max-age=3600", "date": date]) == 3600)
        #expect(lifetime(["cache-control": "max-age=3600, s-maxage=10"]) == 10)
        #expect(lifetime(["expires": HTTPDate.string(fromSeconds: now + 100), "date": date]) == 100)
        #expect(lifetime(["expires": "0", "date": date]) == 0)
        #expect(lifetime(["cdn-cache-control": "max-age=5", "cache-control": "max-age=3600"]) == 5)
        #expect(lifetime(["last-modified": HTTPDate.string(fromSeconds: now - 1000), "date": date]) == 100)
        #expect(lifetime(["last-modified": HTTPDate.string(fromSeconds: now - 1000), "date": date], status: 201) == 0)
    }

    @Test func ageTakesTheFirstValidValue() {
        func age(_ value: String) -> Int64 { HTTPCacheRules.initialAge(headers: ["age": value], requestedAt: 100, receivedAt: 100) }
        #expect(age("7200") == 7200)
        #expect(age("abc") == 0)
        #expect(age("-7200") == 0)
        #expect(age("7200.0") == 0)
        #expect(age("7200, 0") == 7200)
        #expect(age("0, 7200") == 0)
        #expect(age("2147483649") == 1 << 31)
    }

    @Test func reuseFollowsTheResponseAndTheRequest() {
        let fresh = ["cache-control": "max-age=3600"]
        #expect(HTTPCacheRules.reuse(storedHeaders: fresh, lifetime: 3600, age: 0, requestHeaders: [:]) == .fresh)
        #expect(HTTPCacheRules.reuse(storedHeaders: fresh, lifetime: 3600, age: 0, requestHeaders: ["cache-control": "no-cache"]) == .revalidate)
        #expect(HTTPCacheRules.reuse(storedHeaders: fresh, lifetime: 3600, age: 0, requestHeaders: ["pragma": "no-cache"]) == .revalidate)
        #expect(HTTPCacheRules.reuse(storedHeaders: fresh, lifetime: 3600, age: 100, requestHeaders: ["cache-control": "max-age=10"]) == .revalidate)
        #expect(HTTPCacheRules.reuse(storedHeaders: fresh, lifetime: 3600, age: 3500, requestHeaders: ["cache-control": "min-fresh=200"]) == .revalidate)
        #expect(HTTPCacheRules.reuse(storedHeaders: fresh, lifetime: 1, age: 5, requestHeaders: ["cache-control": "max-stale"]) == .staleAccepted)
        #expect(HTTPCacheRules.reuse(
            storedHeaders: ["cache-control": "max-age=1, must-revalidate"], lifetime: 1, age: 5, requestHeaders: ["cache-control": "max-stale"]
        ) == .revalidate)
        #expect(HTTPCacheRules.reuse(
            storedHeaders: ["cache-control": "max-age=1, stale-while-revalidate=10"], lifetime: 1, age: 5, requestHeaders: [:]) == .staleWhileRevalidate)
        #expect(HTTPCacheRules.reuse(
            storedHeaders: ["cache-control": "max-age=1, stale-while-revalidate=2"], lifetime: 1, age: 5, requestHeaders: [:]) == .revalidate)
        #expect(HTTPCacheRules.reuse(storedHeaders: ["cache-control": "max-age=3600, no-cache"], lifetime: 3600, age: 0, requestHeaders: [:]) == .revalidate)
    }

    @Test func storingFollowsRFC9111() {
        let get = Request(path: "a")
        func mayStore(_ headers: [String: String], status: Int = 200, request: Request = Request(path: "a")) -> Bool {
            HTTPCacheRules.mayStore(Response(status: status, headers: headers), for: request, defaultLifetime: nil)
        }
        #expect(mayStore(["cache-control": "max-age=60"], request: get))
        #expect(!mayStore(["cache-control": "max-age=60, private"]))
        #expect(!mayStore(["cache-control": "max-age=60, no-store"]))
        #expect(mayStore(["cache-control": "max-age=60, no-store, must-understand"]))
        #expect(!mayStore(["cache-control": "max-age=60, no-store, must-understand"], status: 599))
        #expect(!mayStore(["cache-control": "max-age=60", "vary": "foo, *"]))
        #expect(!mayStore(["cache-control": "max-age=60"], request: Request(path: "a", headers: ["authorization": "x"])))
        #expect(mayStore(["cache-control": "max-age=60, public"], request: Request(path: "a", headers: ["authorization": "x"])))
        #expect(!mayStore(["cache-control": "max-age=60"], request: Request(path: "a", headers: ["cache-control": "no-store"])))
        #expect(!mayStore([:], status: 201))
        #expect(mayStore([:], status: 404))
        #expect(mayStore(["cache-control": "max-age=60"], status: 599))
        #expect(!mayStore(["cache-control": "max-age=60"], status: 206))
        #expect(!mayStore(["cache-control": "max-age=60"], request: Request(path: "a", method: "HEAD")))
        #expect(mayStore(["cdn-cache-control": "max-age=60", "cache-control": "no-store"]))
    }

    @Test func conditionsMatchEntityTagsWeaklyAndDates() {
        let headers = ["etag": #"W/"v1""#, "last-modified": "Sun, 06 Nov 1994 08:49:37 GMT"]
        #expect(HTTPConditions.isNotModified(requestHeaders: ["if-none-match": #""v0", "v1""#], responseHeaders: headers, status: 200))
        #expect(!HTTPConditions.isNotModified(requestHeaders: ["if-none-match": #""v2""#], responseHeaders: headers, status: 200))
        #expect(HTTPConditions.isNotModified(
            requestHeaders: ["if-modified-since": "Sun, 06 Nov 1994 08:49:37 GMT"], responseHeaders: headers, status: 200))
        #expect(!HTTPConditions.isNotModified(
            requestHeaders: ["if-modified-since": "Sat, 05 Nov 1994 08:49:37 GMT"], responseHeaders: headers, status: 200))
        // If-None-Match wins over If-Modified-Since.
        #expect(!HTTPConditions.isNotModified(
            requestHeaders: ["if-none-match": #""v2""#, "if-modified-since": "Sun, 06 Nov 1994 08:49:37 GMT"], responseHeaders: headers,
            status: 200))
    }
}
