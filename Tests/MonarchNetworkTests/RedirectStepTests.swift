import Foundation
@testable import MonarchNetwork
import Testing

@Suite struct RedirectStepTests {
    private let source = try! UpstreamURL(parsing: "http://127.0.0.1:8080/a")
    private let sameOrigin = try! UpstreamURL(parsing: "http://127.0.0.1:8080/b")
    private let otherOrigin = try! UpstreamURL(parsing: "http://127.0.0.1:9090/b")
    private let headers: [(name: String, value: String)] = [
        ("Authorization", "Bearer x"), ("Content-Type", "application/json"), ("X-Trace", "1"),
    ]

    @Test(arguments: [(303, "POST", "GET"), (303, "PUT", "GET"), (303, "HEAD", "HEAD"), (302, "POST", "GET"),
                      (301, "POST", "GET"), (302, "PUT", "PUT"), (307, "POST", "POST"), (308, "PATCH", "PATCH")])
    func methodsFollowHTTPRules(status: Int, method: String, next: String) {
        let step = RedirectStep(
            status: status, from: source, to: sameOrigin, method: method, headers: headers, body: Data("b".utf8))
        #expect(step.method == next)
        if next == "GET" && method != "GET" {
            #expect(step.body == nil)
            #expect(!step.headers.contains { $0.name == "Content-Type" })
        } else {
            #expect(step.body == Data("b".utf8))
        }
    }

    @Test func credentialsStayWithTheirOrigin() {
        let same = RedirectStep(status: 302, from: source, to: sameOrigin, method: "GET", headers: headers, body: nil)
        #expect(same.headers.contains { $0.name == "Authorization" })
        let other = RedirectStep(status: 302, from: source, to: otherOrigin, method: "GET", headers: headers, body: nil)
        #expect(!other.headers.contains { $0.name == "Authorization" })
        #expect(other.headers.contains { $0.name == "X-Trace" })
    }
}
