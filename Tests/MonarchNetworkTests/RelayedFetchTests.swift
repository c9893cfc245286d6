import Foundation
import Monarch
import MonarchNetwork
import Testing

/// A relayed request (an HTTP client's): the upstream's answer as it is.
@Suite struct RelayedFetchTests {
    private func relayed(_ upstream: String, method: String = "GET") -> Request {
        var request = routed(upstream, method: method)
        request.relay = true
        return request
    }

    @Test func notFoundIsAResponseWithItsBody() async throws {
        try await withHarness { harness in
            let outcome = await harness.provider().perform(relayed(harness.origin.url("/status/404")))
            guard let response = outcome.response() else { return }
            #expect(response.status == 404)
            #expect(response.text == "status 404")
        }
    }

    @Test func aServiceUnavailableIsAResponseAskedOnce() async throws {
        try await withHarness { harness in
            let outcome = await harness.provider().perform(relayed(harness.origin.url("/status/503")))
            #expect(outcome.response()?.status == 503)
            try #expect(await harness.stats().hits["/status/503"] == 1, "no retry of an answer the client is to see")
        }
    }

    @Test func aRedirectIsNotFollowed() async throws {
        try await withHarness { harness in
            let outcome = await harness.provider().perform(relayed(harness.origin.url("/redirect?to=/json")))
            guard let response = outcome.response() else { return }
            #expect(response.status == 302)
            #expect(response.header("location") == "/json")
            try #expect(await harness.stats().hits["/json"] == nil)
        }
    }

    @Test func aCodedBodyPassesAsItCame() async throws {
        try await withHarness { harness in
            let outcome = await harness.provider().perform(relayed(harness.origin.url("/gzip")))
            guard let response = outcome.response() else { return }
            #expect(response.header("content-encoding") == "gzip")
            #expect(response.body.starts(with: [0x1f, 0x8b]), "the gzip bytes, not decoded")
            #expect(response.header("content-length") == String(response.body.count))
        }
    }

    @Test func anyMethodOfTheProtocolsSyntaxIsSent() async throws {
        try await withHarness { harness in
            let outcome = await harness.provider().perform(relayed(harness.origin.url("/status/200"), method: "M-SEARCH"))
            #expect(outcome.response()?.status == 200 || outcome.response()?.status == 501, "\(outcome)")
            let refused = await harness.provider().perform(routed(harness.origin.url("/status/200"), method: "M-SEARCH"))
            #expect(refused.failureCode == "invalidRequest", "only relayed requests send other methods")
        }
    }
}
