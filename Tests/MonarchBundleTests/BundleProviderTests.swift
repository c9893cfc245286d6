import Foundation
import Monarch
import MonarchBundle
import MonarchLoop
import MonarchWire
import Testing

@Suite struct BundleProviderTests {
    @Test func aFileIsA200WithItsTypeLengthAndSource() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/docs/a.json", "{\"a\":1}")
            let provider = BundleProvider(store: try await fixture.store())
            let outcome = await provider.perform(Request(path: "/docs/a.json"))
            guard case .response(let response) = outcome else {
                Issue.record("expected a response, got \(outcome)")
                return
            }
            #expect(response.status == 200)
            #expect(response.source == "bundle")
            #expect(response.body == Data("{\"a\":1}".utf8))
            #expect(response.headers["content-type"] == "application/json; charset=utf-8")
            #expect(response.headers["content-length"] == "7")
            #expect(response.headers.keys.allSatisfy { $0 == $0.lowercased() }, "header names are lowercase")
        }
    }

    @Test func aFileHasAnEntityTagOfItsBytesAndAMatchingConditionGets304() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/a.txt", "hello")
            let provider = BundleProvider(store: try await fixture.store())
            guard case .response(let first) = await provider.perform(Request(path: "a.txt")), let tag = first.headers["etag"] else {
                Issue.record("expected a response with an ETag")
                return
            }
            let conditional = await provider.perform(Request(path: "a.txt", headers: ["if-none-match": tag]))
            guard case .response(let notModified) = conditional else {
                Issue.record("expected a response, got \(conditional)")
                return
            }
            #expect(notModified.status == 304)
            #expect(notModified.body.isEmpty)
            #expect(notModified.headers["etag"] == tag)
            try fixture.write("bundle/a.txt", "hellO")
            guard case .response(let changed) = await provider.perform(Request(path: "a.txt", headers: ["if-none-match": tag])) else {
                Issue.record("expected a response")
                return
            }
            #expect(changed.status == 200, "an edit changes the tag")
            #expect(changed.headers["etag"] != tag)
        }
    }

    @Test func headHasTheLengthButNoBody() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/a.txt", "hello")
            let provider = BundleProvider(store: try await fixture.store())
            guard case .response(let response) = await provider.perform(Request(path: "a.txt", method: "HEAD")) else {
                Issue.record("expected a response")
                return
            }
            #expect(response.body.isEmpty)
            #expect(response.headers["content-length"] == "5")
        }
    }

    @Test func otherMethodsAreInvalidRequests() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/a.txt", "hello")
            let provider = BundleProvider(store: try await fixture.store())
            let outcome = await provider.perform(Request(path: "a.txt", method: "POST"))
            #expect(outcome.failureCode == "invalidRequest")
        }
    }

    @Test func aMissingFileIsAMiss() async throws {
        try await withFixture { fixture in
            try fixture.makeDirectory("bundle")
            let provider = BundleProvider(store: try await fixture.store())
            guard case .miss(let reason) = await provider.perform(Request(path: "nothing.txt")) else {
                Issue.record("expected a miss")
                return
            }
            #expect(reason?.contains("nothing.txt") == true)
        }
    }

    @Test(arguments: ["../secret.txt", "%2e%2e/secret.txt", "a/%00", "a/..", ""])
    func pathsThatWouldLeaveTheFolderAreForbidden(path: String) async throws {
        try await withFixture { fixture in
            try fixture.write("secret.txt", "outside")
            try fixture.makeDirectory("bundle/a")
            let provider = BundleProvider(store: try await fixture.store())
            #expect(await provider.perform(Request(path: path)).failureCode == "forbidden")
        }
    }

    @Test func latencyIsCutShortByCancellation() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/a.txt", "hello")
            let provider = BundleProvider(store: try await fixture.store(), latency: .seconds(60))
            let task = Task { await provider.perform(Request(path: "a.txt")) }
            task.cancel()
            #expect(await task.value.failureCode == "cancelled")
        }
    }
}

extension ProviderOutcome {
    /// The failure's code, or nil for a response or a miss.
    var failureCode: FailureCode? {
        if case .failure(let failure) = self { return failure.code }
        return nil
    }
}
