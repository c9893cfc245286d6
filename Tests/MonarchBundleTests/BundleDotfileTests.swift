import Foundation
import Monarch
import MonarchBundle
import MonarchLoop
import Testing

/// Hidden files — a path with any component starting with `.` — are misses unless the store
/// serves them (`--serve-dotfiles`).
@Suite struct BundleDotfileTests {
    static let hidden: [[String]] = [[".env"], [".git", "config"], ["app", ".env.local"], [".well-known", "security.txt"], ["docs", ".hidden", "page.txt"]]

    /// Answered exactly as a file that is not there, with the same reason, although each one is.
    @Test func hiddenFilesAreMissesByDefault() async throws {
        try await withFixture { fixture in
            for path in Self.hidden { try fixture.write("bundle/" + path.joined(separator: "/"), "secret") }
            try fixture.write("bundle/docs/page.txt", "page")
            let store = try await fixture.store()
            #expect(store.serveDotfiles == false)
            for path in Self.hidden {
                let display = path.joined(separator: "/")
                #expect(await store.read(path) == .notFound("\(display) is not in the bundle"), "\(display)")
            }
            #expect(await store.read(["docs", "page.txt"]).body == Array("page".utf8))
            #expect(await store.read([".missing"]) == .notFound(".missing is not in the bundle"))
        }
    }

    @Test func theProviderAnswersAHiddenFileWithAMiss() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/.env", "API_KEY=secret")
            try fixture.write("bundle/.git/config", "[core]")
            let provider = BundleProvider(store: try await fixture.store())
            #expect(await provider.perform(Request(path: ".env")) == .miss(reason: ".env is not in the bundle"))
            #expect(await provider.perform(Request(path: ".git/config")) == .miss(reason: ".git/config is not in the bundle"))
            #expect(await provider.perform(Request(path: "%2egit/config")) == .miss(reason: ".git/config is not in the bundle"))
        }
    }

    /// Names that merely hold a dot elsewhere are ordinary files.
    @Test func dotsInsideANameAreNotHidden() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/v1.2/app.min.js", "js")
            try fixture.write("bundle/file.", "trailing")
            let store = try await fixture.store()
            #expect(await store.read(["v1.2", "app.min.js"]).body == Array("js".utf8))
            #expect(await store.read(["file."]).body == Array("trailing".utf8))
        }
    }

    @Test(arguments: [BundleStore.Resolution.beneath, .componentWalk])
    func servedWhenAsked(resolution: BundleStore.Resolution) async throws {
        try await withFixture { fixture in
            for path in Self.hidden { try fixture.write("bundle/" + path.joined(separator: "/"), "shown") }
            let store = try await fixture.store(serveDotfiles: true, resolution: resolution)
            #expect(store.serveDotfiles)
            for path in Self.hidden {
                #expect(await store.read(path).body == Array("shown".utf8), "\(path)")
            }
            // `.` and `..` still name no file.
            #expect(await store.read([".."]).isRefused)
            #expect(await store.read(["."]).isRefused)
        }
    }
}
