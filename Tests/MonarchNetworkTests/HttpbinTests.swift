import Foundation
import Monarch
import MonarchLoop
import MonarchNetwork
import Testing

/// The provider against httpbin (from PyPI), a server written by others.
@Suite struct HttpbinTests {
    @Test func statusesMapToResponsesMissesAndFailures() async throws {
        try await withHarness(httpbin: true) { harness in
            let httpbin = try #require(harness.httpbin)
            let provider = harness.provider()
            #expect(await provider.perform(routed(httpbin.url("/status/418"))).response()?.status == 418)
            #expect(await provider.perform(routed(httpbin.url("/status/204"))).response()?.status == 204)
            #expect(await provider.perform(routed(httpbin.url("/status/404"))) == .miss(reason: "\(httpbin.url("/status/404")) answered 404"))
            let unavailable = await provider.perform(routed(httpbin.url("/status/503")))
            #expect(unavailable.failureCode == "upstreamStatus")
            #expect(unavailable.failure?.message.contains("after 3 attempts") == true)
            let posted = await provider.perform(routed(
                httpbin.url("/anything"), method: "POST", headers: ["Content-Type": "text/plain"], body: Data("hello".utf8)))
            let echo = try JSONSerialization.jsonObject(with: try #require(posted.response()).body) as? [String: Any]
            #expect(echo?["method"] as? String == "POST")
            #expect(echo?["data"] as? String == "hello")
        }
    }

    @Test func redirectsAndDelays() async throws {
        try await withHarness(httpbin: true) { harness in
            let httpbin = try #require(harness.httpbin)
            let provider = harness.provider()
            #expect(await provider.perform(routed(httpbin.url("/redirect/3"))).response()?.status == 200)
            #expect(await provider.perform(routed(httpbin.url("/absolute-redirect/2"))).response()?.status == 200)
            #expect(await provider.perform(routed(httpbin.url("/redirect/6"))).failureCode == "tooManyRedirects")
            let away = await harness.provider(allow: [httpbin.allowEntry]).perform(routed(
                httpbin.url("/redirect-to?url=\(harness.origin.url("/json"))")))
            #expect(away.failureCode == "redirectNotAllowed")
            let (slow, elapsed) = await timed(provider, routed(httpbin.url("/delay/5"), deadline: .seconds(1)))
            #expect(slow.failureCode == "timeout")
            #expect(elapsed < .milliseconds(1150))
        }
    }

    @Test func encodingsAndCaching() async throws {
        try await withHarness(httpbin: true) { harness in
            let httpbin = try #require(harness.httpbin)
            let provider = harness.provider()
            for encoding in ["gzip", "deflate"] {
                let response = try #require(await provider.perform(routed(httpbin.url("/\(encoding)"))).response())
                let json = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
                #expect(json?[encoding == "gzip" ? "gzipped" : "deflated"] as? Bool == true)
                #expect(response.header("content-encoding") == nil)
            }
            let tagged = await provider.perform(routed(httpbin.url("/etag/abc"), headers: ["If-None-Match": "\"abc\""]))
            #expect(tagged.response()?.status == 304)
            #expect(tagged.response()?.body.isEmpty == true)
            let fresh = await provider.perform(routed(httpbin.url("/response-headers?Cache-Control=max-age%3D7")))
            #expect(fresh.response()?.ttl == .seconds(7))
            let unstored = await provider.perform(routed(httpbin.url("/response-headers?Cache-Control=no-store")))
            #expect(fresh.response()?.cacheable == true)
            #expect(unstored.response()?.cacheable == false)
            let big = await harness.provider(maxResponseBytes: 1000).perform(routed(httpbin.url("/bytes/5000")))
            #expect(big.failureCode == "responseTooLarge")
            let streamed = await harness.provider(maxResponseBytes: 1000).perform(routed(httpbin.url("/stream-bytes/5000")))
            #expect(streamed.failureCode == "responseTooLarge")
        }
    }
}
