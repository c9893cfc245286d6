import MonarchWire
import Testing
@testable import MonarchRouter

@Suite struct CacheKeyTests {
    @Test("A key reads METHOD domain path, the path in canonical form")
    func text() throws {
        #expect(try CacheKey(domain: "api", parsing: "users/1").rawValue == "GET api users/1")
        #expect(try CacheKey(domain: "api", parsing: "/users/1").rawValue == "GET api users/1")
        #expect(try CacheKey(domain: "api", parsing: "http://example.com/users/1").rawValue == "GET api users/1")
        #expect(try CacheKey(method: "HEAD", domain: "api", parsing: "caf%C3%A9/a b").rawValue == "HEAD api caf%C3%A9/a%20b")
        #expect(try CacheKey(domain: "static", parsing: "docs//a.txt").description == "GET static docs/a.txt")
    }

    @Test("A route host stands before the path as an authority; keys without host are unchanged, and no two hosts' keys meet")
    func host() throws {
        let site = try CacheKey(domain: "site", host: "example.com", parsing: "/index.html?b=2&a=1")
        #expect(site.rawValue == "GET site //example.com/index.html?a=1&b=2")
        #expect(site.host == "example.com" && site.path == "index.html")
        #expect(try CacheKey(method: "HEAD", domain: "site", host: "*.example.com", parsing: "a").rawValue
            == "HEAD site //*.example.com/a")
        let keys = try [nil, "a.test", "b.test"].map { try CacheKey(domain: "site", host: $0, parsing: "index.html") }
        #expect(keys[0].rawValue == "GET site index.html")
        #expect(Set(keys).count == 3)
        // A path cannot make up a host's key: a leading // is not part of a canonical path.
        #expect(try CacheKey(domain: "site", parsing: "//a.test/index.html").rawValue != keys[1].rawValue)
        #expect(try CacheKey(domain: "site", parsing: "%2F%2Fa.test/index.html").rawValue != keys[1].rawValue)
        #expect(CacheKey.prefix(domain: "site", host: "a.test", pathPrefix: "docs/") == "GET site //a.test/docs/")
        #expect(keys[1].rawValue.hasPrefix(CacheKey.prefix(domain: "site", host: "a.test", pathPrefix: "index")))
        #expect(!keys[2].rawValue.hasPrefix(CacheKey.prefix(domain: "site", host: "a.test", pathPrefix: "index")))
        #expect(!keys[1].rawValue.hasPrefix(CacheKey.prefix(domain: "site", pathPrefix: "index")))
    }

    @Test("Query items are encoded, then ordered by name; items of one name keep their order")
    func query() throws {
        let key = try CacheKey(domain: "api", parsing: "search?q=owl&page=2")
        #expect(key.rawValue == "GET api search?page=2&q=owl")
        #expect(key == (try CacheKey(domain: "api", parsing: "search?page=2&q=owl")))
        let tags = try CacheKey(domain: "api", parsing: "notes?tag=b&tag=a")
        #expect(tags.rawValue == "GET api notes?tag=b&tag=a")
        #expect(tags != (try CacheKey(domain: "api", parsing: "notes?tag=a&tag=b")))
        let extra = try CacheKey(domain: "api", parsing: "search?q=a%26b", query: [QueryItem(name: "flag", value: nil)])
        #expect(extra.rawValue == "GET api search?flag&q=a%26b")
        // One item, encoded the same way.
        #expect(try CacheKey(domain: "api", parsing: "search?q=a%26b%20c").rawValue == "GET api search?q=a%26b+c")
        #expect(try CacheKey(domain: "api", parsing: "notes?flag").rawValue == "GET api notes?flag")
        #expect(try CacheKey(domain: "api", parsing: "notes?k%3D=%2B").rawValue == "GET api notes?k%3D=%2B")
    }

    @Test("Equal keys hash alike; keys compare byte for byte")
    func equality() throws {
        let composed = try CacheKey(domain: "d", parsing: "caf\u{e9}")
        let decomposed = try CacheKey(domain: "d", parsing: "cafe\u{301}")
        #expect(composed != decomposed)
        #expect(Set([composed, try CacheKey(domain: "d", parsing: "/caf\u{e9}")]).count == 1)
    }

    @Test("Bad paths are refused with the path's error")
    func badPaths() {
        #expect(throws: PathError.self) { try CacheKey(domain: "api", parsing: "") }
        #expect(throws: PathError.self) { try CacheKey(domain: "api", parsing: "a/../b") }
        #expect(throws: PathError.self) { try CacheKey(domain: "api", parsing: "a/%zz") }
    }

    @Test("Path prefixes keep a trailing slash and are canonical")
    func prefixes() throws {
        #expect(try CacheKey.canonicalPathPrefix("/users/").encoded == "users/")
        #expect(try CacheKey.canonicalPathPrefix("users").encoded == "users")
        #expect(try CacheKey.canonicalPathPrefix("a b/c?x=1").encoded == "a%20b/c")
        #expect(try CacheKey.canonicalPathPrefix("users/").endsWithSlash)
        #expect(throws: PathError.self) { try CacheKey.canonicalPathPrefix("/") }
        #expect(CacheKey.prefix(domain: "api", pathPrefix: "users/") == "GET api users/")
        // The prefix of a path is a prefix of the path's key.
        let key = try CacheKey(domain: "api", parsing: "users/1")
        #expect(key.rawValue.hasPrefix(CacheKey.prefix(domain: "api", pathPrefix: try CacheKey.canonicalPathPrefix("users/").encoded)))
    }

    @Test("Routes a path prefix may reach")
    func routesForPrefix() throws {
        var router = Router<String>()
        for (pattern, target) in [("users/:id", "users"), ("users/:id/notes", "notes"), ("assets/...", "assets"), ("docs/index", "docs")] {
            router.add(try RoutePattern(pattern, where: pattern.hasPrefix("users") ? ["id": "[0-9]+"] : [:]), target)
        }
        #expect(Set(router.targets(forPathsStartingWith: ["users"], lastIsWhole: true)) == ["users", "notes"])
        #expect(router.targets(forPathsStartingWith: ["users", "1", "notes"], lastIsWhole: true) == ["notes"])
        #expect(router.targets(forPathsStartingWith: ["users", "x"], lastIsWhole: true).isEmpty)
        #expect(router.targets(forPathsStartingWith: ["assets", "img", "a.png"], lastIsWhole: true) == ["assets"])
        #expect(router.targets(forPathsStartingWith: ["us"], lastIsWhole: false).sorted() == ["notes", "users"])
        #expect(router.targets(forPathsStartingWith: ["us"], lastIsWhole: true).isEmpty)
        #expect(router.targets(forPathsStartingWith: ["docs", "index", "more"], lastIsWhole: true).isEmpty)
    }
}
