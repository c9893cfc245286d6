import Testing
@testable import MonarchRouter

@Suite struct RoutePatternTests {
    private func path(_ text: String) throws -> ResourcePath {
        try ResourcePath(parsing: text)
    }

    @Test func bindsParametersInOrder() throws {
        let pattern = try RoutePattern("/users/:id/posts/:post")
        #expect(pattern.parameterNames == ["id", "post"])
        #expect(!pattern.hasRemainder)
        #expect(pattern.description == "users/:id/posts/:post")
        let match = try #require(pattern.match(path("users/7/posts/a%2Fb")))
        #expect(match.parameters == ["id": "7", "post": "a/b"])
        #expect(match.remainder.isEmpty)
    }

    @Test func constantsMatchDecodedComponentsExactly() throws {
        let pattern = try RoutePattern("users/a b/café")
        #expect(pattern.match(try path("users/a%20b/caf%C3%A9")) != nil)
        #expect(pattern.match(try path("Users/a%20b/caf%C3%A9")) == nil)
        #expect(pattern.match(try path("users/a%20b/cafe%CC%81")) == nil, "no Unicode normalisation")
        #expect(try RoutePattern("a%20b").match(path("a%20b")) == nil, "pattern text is not decoded")
    }

    @Test func requiresTheSameNumberOfComponentsWithoutRemainder() throws {
        let pattern = try RoutePattern("users/:id")
        #expect(pattern.match(try path("users")) == nil)
        #expect(pattern.match(try path("users/1/2")) == nil)
        #expect(pattern.match(try path("users/1/")) != nil)
    }

    @Test func wildcardMatchesOneComponentWithoutBinding() throws {
        let pattern = try RoutePattern(":_/thumbs/:size")
        #expect(pattern.parameterNames == ["size"])
        let match = try #require(pattern.match(path("anything/thumbs/64")))
        #expect(match.parameters == ["size": "64"])
        #expect(pattern.match(try path("thumbs/64")) == nil)
    }

    @Test func remainderMatchesOneOrMoreComponents() throws {
        let pattern = try RoutePattern("assets/:kind/...")
        #expect(pattern.hasRemainder)
        #expect(pattern.match(try path("assets/img")) == nil, "... needs at least one component")
        let one = try #require(pattern.match(path("assets/img/a.png")))
        #expect(one.parameters == ["kind": "img"])
        #expect(one.remainder == ["a.png"])
        let many = try #require(pattern.match(path("assets/img/x/y%2Fz/a.png?v=1")))
        #expect(many.remainder == ["x", "y/z", "a.png"])

        let everything = try RoutePattern("...")
        #expect(everything.match(try path("a"))?.remainder == ["a"])
        #expect(everything.match(try path("a/b"))?.remainder == ["a", "b"])
    }

    @Test func queryNeverSetsAParameter() throws {
        let pattern = try RoutePattern("users/:id")
        let match = try #require(pattern.match(path("users/1?id=2&x=3")))
        #expect(match.parameters == ["id": "1"])
    }

    @Test func whereConstraintsAreAnchored() throws {
        let pattern = try RoutePattern("users/:id/:name", where: ["id": "[0-9]+", "name": "[a-z]+"])
        #expect(pattern.constraints == ["id": "[0-9]+", "name": "[a-z]+"])
        #expect(pattern.match(try path("users/12/bob")) != nil)
        #expect(pattern.match(try path("users/12a/bob")) == nil)
        #expect(pattern.match(try path("users/a12/bob")) == nil)
        #expect(pattern.match(try path("users/12/bob1")) == nil)
        #expect(pattern.match(try path("users/12/Bob")) == nil)
        let alternation = try RoutePattern(":size", where: ["size": "small|large"])
        #expect(alternation.match(try path("small")) != nil)
        #expect(alternation.match(try path("smaller")) == nil)
        #expect(alternation.match(try path("xlarge")) == nil)
    }

    @Test func whereConstraintSeesTheDecodedComponent() throws {
        let pattern = try RoutePattern("files/:name", where: ["name": "[^/]+"])
        #expect(pattern.match(try path("files/a%20b")) != nil)
        #expect(pattern.match(try path("files/a%2Fb")) == nil)
    }

    static let invalid: [(String, [String: String], String)] = [
        ("", [:], "empty"),
        ("/", [:], "empty"),
        ("a//b", [:], "component 2 is empty"),
        (".../a", [:], "must be the last"),
        ("a/.../b", [:], "must be the last"),
        (":id/:id", [:], "repeats the parameter name \"id\""),
        ("a/:", [:], "invalid parameter name \"\""),
        (":1x", [:], "invalid parameter name \"1x\""),
        (":a-b", [:], "invalid parameter name \"a-b\""),
        (":é", [:], "invalid parameter name"),
        ("a/../b", [:], "dot segment"),
        ("users/:id", ["name": "x"], "where names \"name\""),
        ("users/:_", ["_": "x"], "where names \"_\""),
        ("users/:id", ["id": "[0-9"], "does not compile"),
    ]

    @Test(arguments: invalid)
    func refusesInvalidPatterns(text: String, constraints: [String: String], fragment: String) {
        #expect {
            try RoutePattern(text, where: constraints)
        } throws: { error in
            guard let error = error as? RoutePatternError else { return false }
            return error.message.contains(fragment) && error.message.contains(text.debugDescription)
                && error.description == error.message
        }
    }

    @Test(arguments: ["id", "_id", "__", "a1", "A_b_9", "_0"])
    func acceptsValidParameterNames(name: String) throws {
        #expect(try RoutePattern("x/:\(name)").parameterNames == [name])
    }

    @Test func leadingAndTrailingSlashAreIgnored() throws {
        #expect(try RoutePattern("/a/b/").description == "a/b")
        #expect(try RoutePattern("a/b").description == "a/b")
    }
}
