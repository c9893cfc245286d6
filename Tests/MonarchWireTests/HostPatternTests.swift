import MonarchWire
import Testing

@Suite struct HostPatternTests {
    @Test("A name matches itself alone; *.name matches the names below it, never name itself")
    func matching() throws {
        let exact = try HostPattern("example.com")
        #expect(!exact.isWildcard && exact.labelCount == 2 && exact.description == "example.com")
        #expect(exact.matches("example.com"))
        #expect(!exact.matches("www.example.com") && !exact.matches("example.co") && !exact.matches("xexample.com"))
        let wildcard = try HostPattern("*.example.com")
        #expect(wildcard.isWildcard && wildcard.labelCount == 2 && wildcard.description == "*.example.com")
        #expect(wildcard.matches("a.example.com") && wildcard.matches("a.b.example.com"))
        #expect(!wildcard.matches("example.com"), "the name itself is not below it")
        #expect(!wildcard.matches(".example.com") && !wildcard.matches("aexample.com") && !wildcard.matches("a.example.org"))
        #expect(try HostPattern("localhost").matches("localhost"))
        #expect(try HostPattern("127.0.0.1").labelCount == 4)
    }

    @Test(
        "What is not a lowercase DNS name, or *. and one, is refused saying why",
        arguments: [
            ("", "is empty"), ("Example.com", "lowercase, \"example.com\""), ("example.com:8080", "port"),
            ("example.com.", "ends with a dot"), ("a..b", "empty label"), (".example.com", "empty label"),
            ("ex_ample.com", "a lowercase letter, a digit, a hyphen or a dot"), ("-a.com", "hyphen"), ("a-.com", "hyphen"),
            ("a.*.com", "a * that is not a leading"), ("*", "a * that is not a leading"), ("*.", "is empty"),
            ("**.a.com", "a * that is not a leading"), (String(repeating: "a", count: 64) + ".com", "63"),
            (Array(repeating: "abcdefghi", count: 26).joined(separator: "."), "253"), ("caf\u{e9}.com", "a lowercase letter"),
        ])
    func refusals(text: String, problem: String) {
        #expect {
            try HostPattern(text)
        } throws: { error in
            guard let error = error as? HostPatternError else { return false }
            return error.message.hasPrefix("host \(text.debugDescription) ") && error.message.contains(problem)
        }
    }
}
