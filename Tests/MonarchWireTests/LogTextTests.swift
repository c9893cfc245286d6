import MonarchWire
import Testing

@Suite struct LogTextTests {
    @Test("Control characters are written out, so peer text never starts a log line of its own")
    func escapes() {
        #expect(LogText.sanitized("ok\n2026-11-23 critical: forged") == "ok\\n2026-11-23 critical: forged")
        #expect(LogText.sanitized("a\rb\tc\u{1b}[31md\u{7f}\u{85}\u{2028}") == "a\\rb\\tc\\u{1b}[31md\\u{7f}\\u{85}\\u{2028}")
        #expect(LogText.sanitized("back\\slash") == "back\\\\slash")
        #expect(LogText.sanitized("café ✓") == "café ✓")
        #expect(!LogText.sanitized(String(repeating: "\n", count: 50)).contains("\n"))
    }

    @Test("Long text is cut, saying how long it was; quoting escapes quotes")
    func cutsAndQuotes() {
        let long = String(repeating: "x", count: 1000)
        let cut = LogText.sanitized(long, limit: 10)
        #expect(cut == "xxxxxxxxxx…(1000 bytes)")
        #expect(LogText.quoted("say \"hi\"\n") == "\"say \\\"hi\\\"\\n\"")
    }
}
