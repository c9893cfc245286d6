import Testing
@testable import MonarchRouter

@Suite struct RouterTests {
    /// For the path `a/b`, from the strongest route to the weakest.
    static let ranked = ["a/b", "a/:x", "a/:_", "a/...", ":x/b", "..."]

    static var pairs: [(String, String)] {
        ranked.indices.flatMap { i in ranked.indices.filter { $0 > i }.map { (ranked[i], ranked[$0]) } }
    }

    private func router(_ patterns: [String]) throws -> Router<String> {
        var router = Router<String>()
        for pattern in patterns { router.add(try RoutePattern(pattern), pattern) }
        return router
    }

    private func winner(_ patterns: [String], _ path: String = "a/b") throws -> String? {
        try router(patterns).match(ResourcePath(parsing: path))?.target
    }

    @Test(arguments: pairs)
    func strongerRouteWinsInEitherDeclarationOrder(stronger: String, weaker: String) throws {
        #expect(try winner([stronger, weaker]) == stronger)
        #expect(try winner([weaker, stronger]) == stronger)
    }

    @Test func everyRouteOfTheListMatchesThePath() throws {
        let path = try ResourcePath(parsing: "a/b")
        for pattern in Self.ranked {
            #expect(try RoutePattern(pattern).match(path) != nil, "\(pattern)")
        }
    }

    @Test func declarationOrderNeverChangesTheRanking() throws {
        let path = try ResourcePath(parsing: "/a/b?x=1")
        var orders = [Self.ranked, Self.ranked.reversed()]
        var generator = SplitMix64(seed: 42)
        for _ in 0..<50 { orders.append(Self.ranked.shuffled(using: &generator)) }
        for order in orders {
            let router = try router(order)
            #expect(router.count == Self.ranked.count)
            #expect(router.matches(path).map(\.target) == Self.ranked, "added as \(order)")
            #expect(router.match(path)?.target == "a/b")
            #expect(router.match(path)?.index == order.firstIndex(of: "a/b"))
        }
    }

    @Test func removingTheWinnerHandsThePathToTheNextRoute() throws {
        for start in Self.ranked.indices {
            let rest = Array(Self.ranked[start...])
            #expect(try winner(rest.reversed()) == Self.ranked[start])
        }
    }

    @Test func tiesGoToTheRouteDeclaredFirst() throws {
        var router = Router<String>()
        router.add(try RoutePattern("a/:y"), "first")
        router.add(try RoutePattern("a/:x", where: ["x": "[a-z]+"]), "second, constrained")
        router.add(try RoutePattern("a/:z"), "third")
        let match = try #require(router.match(ResourcePath(parsing: "a/b")))
        #expect(match.target == "first")
        #expect(match.index == 0)
        #expect(match.parameters == ["y": "b"])
        #expect(router.matches(try ResourcePath(parsing: "a/b")).map(\.index) == [0, 1, 2])
    }

    @Test func aRefusedConstraintFallsThroughToTheNextRoute() throws {
        var router = Router<String>()
        router.add(try RoutePattern("users/:id", where: ["id": "[0-9]+"]), "by id")
        router.add(try RoutePattern("users/:name"), "by name")
        router.add(try RoutePattern("users/me"), "me")
        #expect(router.match(try ResourcePath(parsing: "users/42"))?.target == "by id")
        #expect(router.match(try ResourcePath(parsing: "users/42a"))?.target == "by name")
        #expect(router.match(try ResourcePath(parsing: "users/me"))?.target == "me")
    }

    @Test func aConstantDeeperInBeatsAnEarlierRemainder() throws {
        #expect(try winner(["a/...", "a/b/:x"], "a/b/c") == "a/b/:x")
        #expect(try winner(["a/...", "a/b/..."], "a/b/c") == "a/b/...")
        #expect(try winner([":x/...", "a/:_/:_"], "a/b/c") == "a/:_/:_")
        #expect(try winner(["a/...", "a/b/:x"], "a/c/d") == "a/...")
    }

    @Test func theMatchCarriesParametersRemainderAndPattern() throws {
        var router = Router<Int>()
        router.add(try RoutePattern("users/:id"), 1)
        router.add(try RoutePattern("assets/:kind/..."), 2)
        let match = try #require(router.match(ResourcePath(parsing: "http://h/assets/img/x/a%2Fb.png?v=2")))
        #expect(match.target == 2)
        #expect(match.index == 1)
        #expect(match.parameters == ["kind": "img"])
        #expect(match.remainder == ["x", "a/b.png"])
        #expect(match.pattern.description == "assets/:kind/...")
    }

    @Test func noRouteNoMatch() throws {
        let empty = Router<String>()
        #expect(empty.isEmpty)
        #expect(empty.count == 0)
        #expect(empty.match(try ResourcePath(parsing: "a")) == nil)
        let router = try router(["users/:id", "assets/..."])
        #expect(!router.isEmpty)
        #expect(router.match(try ResourcePath(parsing: "users")) == nil)
        #expect(router.match(try ResourcePath(parsing: "assets")) == nil)
        #expect(router.match(try ResourcePath(parsing: "users/1/2")) == nil)
    }

    @Test func matchesConcurrentlyFromManyTasks() async throws {
        var router = Router<String>()
        router.add(try RoutePattern("users/:id", where: ["id": "[0-9]+"]), "id")
        router.add(try RoutePattern("users/:name"), "name")
        let shared = router
        let results = await withTaskGroup(of: Bool.self) { group in
            for task in 0..<8 {
                group.addTask {
                    (0..<200).allSatisfy { round in
                        let numeric = (task + round).isMultiple(of: 2)
                        let path = try? ResourcePath(parsing: numeric ? "users/\(round)" : "users/u\(round)")
                        return path.flatMap { shared.match($0)?.target } == (numeric ? "id" : "name")
                    }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 8))
    }
}

/// A small deterministic generator, so shuffled orders are the same on every run.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
