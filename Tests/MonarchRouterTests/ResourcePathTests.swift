import MonarchWire
import Testing
@testable import MonarchRouter

@Suite struct ResourcePathTests {
    /// Paths that parse, with the components they must give.
    static let parsed: [(String, [String])] = [
        ("users/1", ["users", "1"]),
        ("/users/1", ["users", "1"]),
        ("http://example.com/users/1?x=1#top", ["users", "1"]),
        ("https://example.com:8443/users/1", ["users", "1"]),
        ("HTTP://[::1]:80/users/1", ["users", "1"]),
        ("users/1/", ["users", "1"]),
        ("users//1", ["users", "1"]),
        ("//users///1//", ["users", "1"]),
        ("users/%31", ["users", "1"]),
        ("users/a%2Fb", ["users", "a/b"]),
        ("users/a%2fb", ["users", "a/b"]),
        ("users/%252F", ["users", "%2F"]),
        ("users/1?id=2", ["users", "1"]),
        ("café/%C3%A9", ["café", "é"]),
        ("a+b/c%20d", ["a+b", "c d"]),
        ("users/.../x", ["users", "...", "x"]),
        ("users/.hidden/..x", ["users", ".hidden", "..x"]),
        ("a:b/c@d", ["a:b", "c@d"]),
        ("users/%3F%23", ["users", "?#"]),
    ]

    @Test(arguments: parsed)
    func parsesComponents(text: String, components: [String]) throws {
        let path = try ResourcePath(parsing: text)
        #expect(path.components == components)
    }

    @Test(arguments: parsed)
    func encodedFormParsesBackToTheSameComponents(text: String, components: [String]) throws {
        let path = try ResourcePath(parsing: text)
        let again = try ResourcePath(parsing: path.encoded)
        #expect(again.components == path.components)
        #expect(again.encoded == path.encoded)
        #expect(!path.encoded.hasPrefix("/"))
        #expect(!path.encoded.contains("?") && !path.encoded.contains("#"))
        #expect(path.description == path.encoded)
    }

    /// Texts that must be refused, with the error code.
    static let refused: [(String, PathError.Code)] = [
        ("", .empty),
        ("/", .empty),
        ("///", .empty),
        ("?q=1", .empty),
        ("#frag", .empty),
        ("/?q=1#frag", .empty),
        ("http://host", .empty),
        ("http://host/", .empty),
        ("https://host:1/?a=b", .empty),
        ("%2e%2e/etc/passwd", .dotSegment),
        ("users/..", .dotSegment),
        ("users/.", .dotSegment),
        ("users/%2e%2E", .dotSegment),
        ("../users", .dotSegment),
        ("users/%00", .nulByte),
        ("users/a\u{0}b", .nulByte),
        ("users/1?a=%00", .nulByte),
        ("users/1#%00", .nulByte),
        ("users/%zz", .invalidPercentEncoding),
        ("users/%", .invalidPercentEncoding),
        ("users/%4", .invalidPercentEncoding),
        ("users/%4g", .invalidPercentEncoding),
        ("users/%C3", .invalidPercentEncoding),
        ("users/%FF", .invalidPercentEncoding),
        ("users/1?a=%zz", .invalidPercentEncoding),
        ("users/1?%=1", .invalidPercentEncoding),
        ("users/1#%", .invalidPercentEncoding),
        ("ftp://host/users/1", .invalidURL),
        ("http:///users/1", .invalidURL),
        ("http://user@host/users/1", .invalidURL),
        ("http://host:80x/users/1", .invalidURL),
        ("http://[::1/users/1", .invalidURL),
    ]

    @Test(arguments: refused)
    func refuses(text: String, code: PathError.Code) {
        #expect {
            try ResourcePath(parsing: text)
        } throws: { error in
            (error as? PathError)?.code == code
        }
    }

    @Test func errorMessagesNameTheOffendingPart() throws {
        let dot = try #require(throws: PathError.self) { try ResourcePath(parsing: "a/%2e%2e/b") }
        #expect(dot.message.contains("component 2"))
        #expect(dot.message.contains("%2e%2e"))
        #expect(dot.description.hasPrefix("dotSegment: "))

        let escape = try #require(throws: PathError.self) { try ResourcePath(parsing: "a/b/x%zz") }
        #expect(escape.message.contains("component 3"))
        #expect(escape.message.contains("x%zz"))

        let nul = try #require(throws: PathError.self) { try ResourcePath(parsing: "a?k=v&n=%00") }
        #expect(nul.message.contains("the value of query item 2"))

        let empty = try #require(throws: PathError.self) { try ResourcePath(parsing: "?q=1") }
        #expect(empty.message.contains("no component"))
    }

    @Test func leadingSlashAndURLGiveTheSamePath() throws {
        let bare = try ResourcePath(parsing: "users/1")
        #expect(try ResourcePath(parsing: "/users/1") == bare)
        #expect(try ResourcePath(parsing: "http://127.0.0.1:8080/users/1") == bare)
        #expect(try ResourcePath(parsing: "https://example.com/users/1/") == bare)
    }

    @Test func decodesExactlyOnce() throws {
        let path = try ResourcePath(parsing: "files/%2525/%252F")
        #expect(path.components == ["files", "%25", "%2F"])
        #expect(path.encoded == "files/%2525/%252F")
    }

    @Test func encodedSlashStaysInsideItsComponent() throws {
        let path = try ResourcePath(parsing: "users/a%2Fb")
        #expect(path.components.count == 2)
        #expect(path.encoded == "users/a%2Fb")
    }

    @Test func encodedFormEscapesWhatAPathSegmentCannotHold() throws {
        let path = try ResourcePath(components: ["a b", "x/y", "q?#%", "café", "ok-._~!$&'()*+,;=:@"])
        #expect(path.encoded == "a%20b/x%2Fy/q%3F%23%25/caf%C3%A9/ok-._~!$&'()*+,;=:@")
        #expect(try ResourcePath(parsing: path.encoded).components == path.components)
    }

    @Test func splitsQueryItemsInOrderKeepingDuplicates() throws {
        let path = try ResourcePath(parsing: "search?q=a%20b&flag&q=2&empty=&plus=1+1&&eq=a=b")
        #expect(path.components == ["search"])
        #expect(
            path.query == [
                QueryItem(name: "q", value: "a b"),
                QueryItem(name: "flag", value: nil),
                QueryItem(name: "q", value: "2"),
                QueryItem(name: "empty", value: ""),
                QueryItem(name: "plus", value: "1 1"),
                QueryItem(name: "eq", value: "a=b"),
            ])
        #expect(path.fragment == nil)
    }

    @Test func splitsTheFragmentBeforeTheQuery() throws {
        let path = try ResourcePath(parsing: "/docs/a?x=1#sec%201?not=query")
        #expect(path.components == ["docs", "a"])
        #expect(path.query == [QueryItem(name: "x", value: "1")])
        #expect(path.fragment == "sec 1?not=query")

        let hashOnly = try ResourcePath(parsing: "docs#")
        #expect(hashOnly.fragment == "")
        #expect(hashOnly.query.isEmpty)

        let queryInFragment = try ResourcePath(parsing: "docs#a?b=1")
        #expect(queryInFragment.query.isEmpty)
        #expect(queryInFragment.fragment == "a?b=1")
    }

    @Test func queryAndFragmentNeverLeakIntoComponents() throws {
        let path = try ResourcePath(parsing: "http://example.com/users/1?x=1#top")
        #expect(path.components == ["users", "1"])
        #expect(path.query == [QueryItem(name: "x", value: "1")])
        #expect(path.fragment == "top")
        #expect(path.encoded == "users/1")
    }

    @Test func initFromComponentsValidatesLikeParsing() throws {
        let path = try ResourcePath(
            components: ["users", "a/b"], query: [QueryItem(name: "x", value: nil)], fragment: "f")
        #expect(path.encoded == "users/a%2Fb")
        #expect(path.query == [QueryItem(name: "x", value: nil)])
        #expect(path.fragment == "f")

        let cases: [([String], PathError.Code)] = [
            ([], .empty),
            (["a", ""], .empty),
            (["a", ".."], .dotSegment),
            (["."], .dotSegment),
            (["a\u{0}"], .nulByte),
        ]
        for (components, code) in cases {
            let error = try #require(throws: PathError.self) { try ResourcePath(components: components) }
            #expect(error.code == code, "\(components)")
        }
    }

    @Test func equalityComparesBytesWithoutNormalisation() throws {
        let composed = try ResourcePath(components: ["caf\u{E9}"])
        let decomposed = try ResourcePath(components: ["cafe\u{301}"])
        #expect(composed != decomposed)
        #expect(composed.encoded != decomposed.encoded)
        #expect(Set([composed, decomposed, try ResourcePath(parsing: "caf%C3%A9")]).count == 2)
        #expect(try ResourcePath(parsing: "a?x") != ResourcePath(parsing: "a?x="))
        #expect(try ResourcePath(parsing: "a#") != ResourcePath(parsing: "a"))
    }
}
