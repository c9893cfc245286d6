import Testing

@testable import MonarchCoordinator

@Suite struct TokenTests {
    @Test func onlyTheSameTokenMatches() {
        #expect(Coordinator.tokensMatch("secret", "secret"))
        #expect(!Coordinator.tokensMatch("secreT", "secret"))
        #expect(!Coordinator.tokensMatch("secret1", "secret"))
        #expect(!Coordinator.tokensMatch("secre", "secret"))
        #expect(!Coordinator.tokensMatch("", "secret"))
        #expect(!Coordinator.tokensMatch(nil, "secret"))
        #expect(!Coordinator.tokensMatch("secret", nil))
    }
}
