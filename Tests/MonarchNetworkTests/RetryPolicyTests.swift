import MonarchNetwork
import Testing

@Suite struct RetryPolicyTests {
    @Test func ceilingsDoubleFromTheBaseUpToTheCap() {
        let policy = RetryPolicy()
        let ceilings = (1...7).map { policy.ceiling(beforeRetry: $0) }
        #expect(ceilings == [
            .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1600),
            .seconds(2), .seconds(2),
        ])
    }

    @Test func delaysAreFullJitterBelowTheCeiling() {
        let policy = RetryPolicy()
        var generator = SystemRandomNumberGenerator()
        let delays = (0..<500).map { _ in policy.delay(beforeRetry: 3, using: &generator) }
        #expect(delays.allSatisfy { $0 >= .zero && $0 <= .milliseconds(400) })
        #expect(delays.contains { $0 < .milliseconds(100) }, "the whole range is used, down to zero")
        #expect(delays.contains { $0 > .milliseconds(300) })
    }

    @Test func onlyIdempotentMethodsAndGatewayStatusesAreRetried() {
        #expect(["GET", "HEAD", "PUT", "DELETE"].allSatisfy(RetryPolicy.isIdempotent))
        #expect(!["POST", "PATCH"].contains(where: RetryPolicy.isIdempotent))
        #expect([502, 503, 504].allSatisfy { RetryPolicy.isRetryable(status: $0) })
        #expect(![500, 501, 404, 200].contains { RetryPolicy.isRetryable(status: $0) })
    }

    @Test func negativeRetriesMeanNone() {
        #expect(RetryPolicy(maxRetries: -3).maxRetries == 0)
    }
}
