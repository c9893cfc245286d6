import Foundation
import MonarchWire
import Testing

/// ``FailureCode`` against the protocol's table of failure codes (Protocols/README.md,
/// section 8), which Protocols/check.py holds against its own list.
@Suite struct FailureCodeTests {
    /// The codes in the first column of section 8's table, in order.
    static let specifiedCodes: [String] = {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Protocols/README.md")
        guard let text = try? String(contentsOf: url, encoding: .utf8),
            let start = text.range(of: "**Failure codes**"),
            let end = text.range(of: "**Attempt outcomes**", range: start.upperBound..<text.endIndex)
        else {
            // An unreadable specification must fail the run, never skip it.
            fatalError("cannot read section 8's table of failure codes in \(url.path)")
        }
        var codes: [String] = []
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n") where line.hasPrefix("| `") {
            let firstCell = line.split(separator: "|", omittingEmptySubsequences: true)[0]
            // A cell may name several codes: "`redirectNotAllowed`, `tooManyRedirects`".
            let parts = firstCell.split(separator: "`")
            codes += stride(from: 1, to: parts.count, by: 2).map { String(parts[$0]) }
        }
        return codes
    }()

    @Test("Every code FailureCode names is in the protocol's table, and every code of the table is named")
    func knownCodesAreTheSpecifiedOnes() {
        let specified = Self.specifiedCodes
        #expect(specified.count > 20)
        let known = FailureCode.known.map(\.rawValue)
        #expect(Set(known).subtracting(specified).sorted() == [], "named in Swift, missing from the table")
        #expect(Set(specified).subtracting(known).sorted() == [], "in the table, not named in Swift")
        #expect(Set(known).count == known.count, "FailureCode.known lists a code twice")
        #expect(Set(specified).count == specified.count, "the table lists a code twice")
    }

    @Test("A code travels as its raw string, a code no one named included")
    func wireFormIsTheRawString() throws {
        for code in FailureCode.known + ["martian"] {
            let encoded = try JSONEncoder().encode(code)
            #expect(String(decoding: encoded, as: UTF8.self) == "\"\(code.rawValue)\"")
            #expect(try JSONDecoder().decode(FailureCode.self, from: encoded) == code)
        }
        #expect(FailureCode(rawValue: "storeUnavailable") == .storeUnavailable)
    }

    @Test("Only timeout and deadlineExceeded say the time ran out")
    func outOfTime() {
        #expect(FailureCode.known.filter(\.isOutOfTime) == [.deadlineExceeded, .timeout])
    }
}
