import Testing
@testable import MonarchRouter

@Suite struct PercentEncodingTests {
    @Test func everyByteOfEveryASCIIAndSomeWiderCharactersRoundTrips() throws {
        var samples = (1...0x7F).map { String(UnicodeScalar(UInt8($0))) }
        samples += ["é", "ß", "€", "日本", "🦋", "e\u{301}"]
        for text in samples {
            for keep in [PercentEncoding.isUnreserved, PercentEncoding.isPathSegmentCharacter] {
                let encoded = PercentEncoding.encode(text, keeping: keep)
                #expect(encoded.utf8.allSatisfy { $0 < 0x80 }, "\(text.debugDescription) → \(encoded)")
                #expect(!encoded.contains("/") && !encoded.contains("?") && !encoded.contains("#"))
                #expect(try PercentEncoding.decode(Substring(encoded)).utf8.elementsEqual(text.utf8))
            }
        }
    }

    @Test func unreservedIsExactlyRFC3986() {
        let kept = (0...0xFF).map(UInt8.init).filter(PercentEncoding.isUnreserved)
        let expected = Array("-.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~".utf8)
        #expect(kept == expected)
    }

    @Test func decodesHexOfEitherCaseOnceAndKeepsPlus() throws {
        #expect(try PercentEncoding.decode("%2f%2F%252F+") == "//%2F+")
    }

    @Test(arguments: ["%", "%4", "%zz", "a%g1", "%%"])
    func refusesBadEscapes(text: String) {
        #expect(throws: PercentEncoding.DecodingFailure.invalidEscape) { try PercentEncoding.decode(Substring(text)) }
    }

    @Test(arguments: ["%C3", "%FF", "%C3%28", "%ED%A0%80"])
    func refusesBytesThatAreNotUTF8(text: String) {
        #expect(throws: PercentEncoding.DecodingFailure.invalidUTF8) { try PercentEncoding.decode(Substring(text)) }
    }
}
