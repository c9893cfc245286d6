import Foundation
import MonarchBundle
import MonarchLoop
import MonarchWorker
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct BundleStoreTests {
    // MARK: - Files that are there

    @Test func servesTopLevelAndNestedFiles() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/index.html", "<p>hello</p>")
            try fixture.write("bundle/a/b/c.json", "{\"c\":1}")
            let store = try await fixture.store()
            #expect(await store.read(["index.html"]) == .file(body: Array("<p>hello</p>".utf8), contentType: "text/html; charset=utf-8"))
            #expect(await store.read(["a", "b", "c.json"]) == .file(body: Array("{\"c\":1}".utf8), contentType: "application/json; charset=utf-8"))
        }
    }

    @Test func servesContentTypesByExtension() async throws {
        try await withFixture { fixture in
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0xFF]
            try fixture.write("bundle/logo.png", png)
            try fixture.write("bundle/LOGO.PNG", png)
            try fixture.write("bundle/blob.unknownext", [1, 2, 3])
            try fixture.write("bundle/notes.txt", "text")
            let store = try await fixture.store()
            #expect(await store.read(["logo.png"]) == .file(body: png, contentType: "image/png"))
            #expect(await store.read(["LOGO.PNG"]) == .file(body: png, contentType: "image/png"))
            #expect(await store.read(["blob.unknownext"]).contentType == "application/octet-stream")
            #expect(await store.read(["notes.txt"]).contentType == "text/plain; charset=utf-8")
        }
    }

    @Test func readsAFileLargerThanOneBufferWhole() async throws {
        try await withFixture { fixture in
            let bytes = (0..<200_003).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
            try fixture.write("bundle/big.bin", bytes)
            let store = try await fixture.store()
            #expect(await store.read(["big.bin"]).body == bytes)
        }
    }

    @Test func servesAnEmptyFileWithAnEmptyBody() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/empty.txt", [UInt8]())
            #expect(try await fixture.store().read(["empty.txt"]) == .file(body: [], contentType: "text/plain; charset=utf-8"))
            // Even with no room at all for bytes.
            #expect(try await fixture.store(maxFileBytes: 0).read(["empty.txt"]).body == [])
        }
    }

    @Test func servesNonASCIINames() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/caf\u{e9}/\u{1F98B}.txt", "papillon")
            #expect(try await fixture.store().read(["caf\u{e9}", "\u{1F98B}.txt"]).body == Array("papillon".utf8))
        }
    }

    // MARK: - Misses

    @Test func aMissingFileIsNotFound() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/there.txt", "x")
            let store = try await fixture.store()
            #expect(await store.read(["missing.txt"]).isNotFound)
            #expect(await store.read(["no", "such", "folder.txt"]).isNotFound)
            // A file used as a folder.
            #expect(await store.read(["there.txt", "inside"]).isNotFound)
        }
    }

    @Test func aDirectoryIsNotFound() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/docs/index.html", "x")
            let store = try await fixture.store()
            #expect(await store.read(["docs"]).isNotFound)
        }
    }

    @Test func aLinkToADirectoryInsideIsNotFound() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/docs/index.html", "x")
            try fixture.link("bundle/alias", to: "docs")
            let store = try await fixture.store()
            #expect(await store.read(["alias"]).isNotFound)
            #expect(await store.read(["alias", "index.html"]).body == Array("x".utf8))
        }
    }

    // MARK: - Refusals

    @Test(arguments: [
        [], [""], ["."], [".."], ["a/b"], ["a\0b"], ["\0"], ["a", ".."], ["a", "", "b"], ["..", "outside", "secret.txt"],
        ["/etc"], ["a", "."],
    ] as [[String]])
    func componentsThatNameNoFileAreRefused(components: [String]) async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/a/b", "inside")
            try fixture.write("outside/secret.txt", "secret")
            let answer = try await fixture.store().read(components)
            #expect(answer.isRefused, "\(components.debugDescription) gave \(answer)")
        }
    }

    /// A slash followed by a combining mark is one `Character`, so a check over characters
    /// does not see it; the file system still splits the path there.
    @Test func aSlashFollowedByACombiningMarkIsStillASlash() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/a/\u{301}", "inside")
            let answer = try await fixture.store().read(["a/\u{301}"])
            #expect(answer.isRefused, "gave \(answer)")
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: [BundleStore.Resolution.beneath, .componentWalk])
    func aFIFOIsRefusedWithoutWaitingForAWriter(resolution: BundleStore.Resolution) async throws {
        try await withFixture { fixture in
            try fixture.makeFIFO("bundle/pipe")
            try fixture.link("bundle/pipe.txt", to: "pipe")
            let store = try await fixture.store(resolution: resolution)
            #expect(await store.read(["pipe"]).isRefused)
            // Followed (and refused) beneath the folder; not followed at all by the walk.
            let linked = await store.read(["pipe.txt"])
            #expect(resolution == .beneath ? linked.isRefused : linked.isNotFound, "gave \(linked)")
        }
    }

    /// `/dev/zero` is outside the bundle: the link is a miss like any other way out.
    @Test(arguments: [BundleStore.Resolution.beneath, .componentWalk])
    func aLinkToADeviceIsAMiss(resolution: BundleStore.Resolution) async throws {
        try await withFixture { fixture in
            try fixture.link("bundle/zero", to: "/dev/zero")
            let store = try await fixture.store(resolution: resolution)
            #expect(await store.read(["zero"]) == .notFound("zero is not in the bundle"))
        }
    }

    @Test(arguments: [BundleStore.Resolution.beneath, .componentWalk])
    func aLinkLoopIsAnAnswerNotAHang(resolution: BundleStore.Resolution) async throws {
        try await withFixture { fixture in
            try fixture.link("bundle/loop-a", to: "loop-b")
            try fixture.link("bundle/loop-b", to: "loop-a")
            try fixture.link("bundle/dangling", to: "nowhere")
            let store = try await fixture.store(resolution: resolution)
            let loopAnswer = await store.read(["loop-a"])
            #expect(!loopAnswer.isFileAnswer)
            #expect(await store.read(["dangling"]).isNotFound)
        }
    }

    // MARK: - Limits

    @Test func aFileOverTheLimitIsTooLarge() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/limit.bin", [UInt8](repeating: 7, count: 1000))
            try fixture.write("bundle/over.bin", [UInt8](repeating: 7, count: 1001))
            let store = try await fixture.store(maxFileBytes: 1000)
            #expect(await store.read(["limit.bin"]).body?.count == 1000)
            #expect(
                await store.read(["over.bin"])
                    == .tooLarge("over.bin is 1001 bytes, more than the 1000 bytes served (the bundle's file size limit)"))
        }
    }

    /// The frame's body limit caps the configured one when smaller, and only then; every copy
    /// of the store shares it.
    @Test func theFrameBodyLimitCapsTheConfiguredLimit() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/limit.bin", [UInt8](repeating: 7, count: 600))
            try fixture.write("bundle/over.bin", [UInt8](repeating: 7, count: 601))
            let store = try await fixture.store(maxFileBytes: 1000)
            let copy = store
            #expect(store.effectiveMaxFileBytes == 1000)
            store.limitBodies(toFitFrameBodiesOf: 600)
            #expect(copy.effectiveMaxFileBytes == 600)
            #expect(await copy.read(["limit.bin"]).body?.count == 600)
            #expect(
                await copy.read(["over.bin"])
                    == .tooLarge("over.bin is 601 bytes, more than the 600 bytes served (the largest body a frame to the coordinator carries)"))
            store.limitBodies(toFitFrameBodiesOf: 5000)
            #expect(copy.effectiveMaxFileBytes == 1000)
        }
    }

    /// The default limit is the largest body the protocol's default frame carries.
    @Test func theDefaultLimitFitsTheDefaultFrame() async throws {
        #expect(BundleStore.defaultMaxFileBytes == AnswerLimits.protocolDefault.maxBodyBytes)
        try await withFixture { fixture in
            let store = try await fixture.store()
            #expect(store.maxFileBytes == AnswerLimits.protocolDefault.maxBodyBytes)
        }
    }

    // MARK: - Opening the bundle

    @Test func aMissingRootThrows() async throws {
        try await withFixture { fixture in
            await #expect(throws: BundleStoreError.self) {
                try await BundleStore(root: fixture.base + "/nothing-here", on: fixture.loop)
            }
        }
    }

    @Test func aRootThatIsARegularFileThrows() async throws {
        try await withFixture { fixture in
            try fixture.write("file.txt", "x")
            await #expect(throws: BundleStoreError.self) {
                try await BundleStore(root: fixture.base + "/file.txt", on: fixture.loop)
            }
        }
    }

    @Test func aLinkedRootIsResolved() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/page.txt", "page")
            try fixture.link("link-to-bundle", to: "bundle")
            let store = try await BundleStore(root: fixture.base + "/link-to-bundle/", on: fixture.loop)
            let resolved = try #require(realpath(fixture.bundle, nil))
            defer { free(resolved) }
            #expect(store.root == String(cString: resolved))
            #expect(await store.read(["page.txt"]).body == Array("page".utf8))
        }
    }

    @Test func theFileSystemRootCanBeTheBundle() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/page.txt", "page")
            let resolved = try #require(realpath(fixture.bundle, nil))
            let path = String(cString: resolved)
            free(resolved)
            let components = path.split(separator: "/").map(String.init) + ["page.txt"]
            let store = try await BundleStore(root: "/", on: fixture.loop)
            let answer = await store.read(components)
            #expect(answer.body == Array("page".utf8), "gave \(answer)")
        }
    }

    @Test func aStoreOnAShutDownLoopFailsInsteadOfHanging() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/page.txt", "page")
            let other = try EventLoop(name: "bundle-short-lived")
            let store = try await BundleStore(root: fixture.bundle, on: other)
            other.shutdown()
            #expect(await store.read(["page.txt"]).isFailed)
            await #expect(throws: BundleStoreError.self) { try await BundleStore(root: fixture.bundle, on: other) }
        }
    }

    // MARK: - Descriptors

    @Test func readsLeakNoFileDescriptors() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/page.html", "<p>page</p>")
            try fixture.write("bundle/big.bin", [UInt8](repeating: 1, count: 2000))
            try fixture.write("bundle/docs/a.txt", "a")
            try fixture.write("outside/secret.txt", "secret")
            try fixture.link("bundle/out.txt", to: "../outside/secret.txt")
            try fixture.makeFIFO("bundle/pipe")
            let store = try await fixture.store(maxFileBytes: 1000)
            // The probe sees a descriptor of ours when there is one.
            let probe = open(fixture.bundle + "/page.html", O_RDONLY)
            #expect(descriptorsOpen(under: fixture.base).count == 1)
            close(probe)
            #expect(descriptorsOpen(under: fixture.base) == [])
            let paths: [[String]] = [["page.html"], ["big.bin"], ["docs"], ["missing"], ["out.txt"], ["pipe"], [".."], ["docs", "a.txt"]]
            var served = 0
            for index in 0..<200 {
                if case .file = await store.read(paths[index % paths.count]) { served += 1 }
            }
            #expect(served == 50)
            // The walk that stands in for openat2 closes every folder it opens on the way.
            let walking = try await fixture.store(maxFileBytes: 1000, resolution: .componentWalk)
            for index in 0..<200 {
                if case .file = await walking.read(paths[index % paths.count]) { served += 1 }
            }
            #expect(served == 100)
            // Other tests open and close descriptors meanwhile, so the whole count proves
            // little; none of those naming this test's folder may stay open.
            #expect(descriptorsOpen(under: fixture.base) == [])
        }
    }
}

extension BundleAnswer {
    var isFileAnswer: Bool { if case .file = self { true } else { false } }
}
