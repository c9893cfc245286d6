import MonarchRouter
import Testing

/// A query parsed alone gives the items and the errors the whole path's parse gives.
@Suite struct QueryItemsParsingTests {
    @Test(arguments: ["a=1", "a=1&b", "&&a=&b=2&", "", "x=%2B+y&x=2", "n%C3%A9=v%20w", "a=%zz", "a=1&%00", "b=%ff"])
    func aQueryAloneParsesAsInAPath(query: String) {
        let whole = Result { () throws(PathError) in try ResourcePath(parsing: "p?" + query).query }
        let alone = Result { () throws(PathError) in try ResourcePath.queryItems(parsing: Substring(query)) }
        switch (whole, alone) {
        case (.success(let whole), .success(let alone)): #expect(whole == alone)
        case (.failure(let whole), .failure(let alone)): #expect(whole.code == alone.code && whole.message == alone.message)
        default: Issue.record("\(query): whole \(whole), alone \(alone)")
        }
    }
}
