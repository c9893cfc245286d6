import Testing

@testable import MonarchCoordinator

@Suite struct TokenTests {
    @Test func onlyTheSameTokenMatches() {
        #expect(RoleGate.matches("secret", "secret"))
        #expect(!RoleGate.matches("secreT", "secret"))
        #expect(!RoleGate.matches("secret1", "secret"))
        #expect(!RoleGate.matches("secre", "secret"))
        #expect(!RoleGate.matches("", "secret"))
        #expect(!RoleGate.matches(nil, "secret"))
        #expect(!RoleGate.matches("secret", nil))
    }
}
