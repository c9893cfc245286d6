import Monarch
import MonarchConfig
import MonarchRouter
import MonarchWire
import Testing

@testable import MonarchCoordinator

@Suite struct TargetResolutionTests {
    /// `...` goes to `files` (no cache), `api/...` to `api` (with one).
    static func resolution() throws -> TargetResolution {
        let router = try Router<RouteOptions>(routes: [
            .init(match: "...", domain: "files"),
            .init(match: "api/...", domain: "api", upstream: "http://127.0.0.1:8080/...", ttl: .seconds(60)),
        ])
        return TargetResolution(
            router: router, domains: ["files", "api"], cachedDomains: ["api"], limits: Configuration.Limits())
    }

    @Test func aPathPrefixNamesOnlyTheDomainsThatKeepACache() throws {
        // Paths under api/ may match both routes; only api's chain has a cache.
        let targets = try Self.resolution().resolve(.pathPrefix("api/users/", domain: nil))
        #expect(targets == [.prefix("GET api api/users/"), .prefix("HEAD api api/users/")])
    }

    @Test func aPathPrefixReachingNoCacheIsRefusedAndSaysWhy() throws {
        #expect {
            try Self.resolution().resolve(.pathPrefix("docs/", domain: nil))
        } throws: { error in
            guard let error = error as? ChainError else { return false }
            return error.code == .noRoute && error.message.contains("keep no cache") && error.message.contains("files")
        }
    }

    @Test func aNamedDomainIsTakenAsGiven() throws {
        let targets = try Self.resolution().resolve(.pathPrefix("docs/", domain: "files"))
        #expect(targets == [.prefix("GET files docs/"), .prefix("HEAD files docs/")])
    }
}
