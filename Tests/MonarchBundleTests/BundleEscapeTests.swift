import Foundation
import Monarch
@testable import MonarchBundle
import MonarchLoop
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Symbolic links and the bundle folder's edge, under both ways of opening files: `openat2`
/// beneath the folder, and the component walk that stands in for it on kernels without.
@Suite struct BundleEscapeTests {
    static let resolutions: [BundleStore.Resolution] = [.beneath, .componentWalk]

    /// This machine's kernel has `openat2`: the store picks it by itself.
    @Test func theStorePicksOpenat2WhenTheKernelHasIt() async throws {
        try await withFixture { fixture in
            let picked = try await fixture.store()
            let forced = try await fixture.store(resolution: .componentWalk)
            #expect(picked.resolution == .beneath)
            #expect(forced.resolution == .componentWalk)
        }
    }

    // MARK: - Ways out are misses, whether the target exists or not

    /// A link to a file outside — relative, absolute, to `/etc/passwd` — answers exactly as a
    /// link to nothing outside, and as a file that is not there: the answers tell nothing
    /// about what exists outside the folder.
    @Test(arguments: resolutions)
    func aLinkOutIsTheSameMissWhetherItsTargetExistsOrNot(resolution: BundleStore.Resolution) async throws {
        try await withFixture { fixture in
            try fixture.write("outside/secret.txt", "secret")
            try fixture.link("bundle/relative.txt", to: "../outside/secret.txt")
            try fixture.link("bundle/relative-ghost.txt", to: "../outside/nothing.txt")
            try fixture.link("bundle/absolute.txt", to: fixture.outside + "/secret.txt")
            try fixture.link("bundle/absolute-ghost.txt", to: fixture.outside + "/nothing.txt")
            try fixture.link("bundle/passwd", to: "/etc/passwd")
            try fixture.link("bundle/ghost", to: "/nonexistent-\(getpid())/passwd")
            let store = try await fixture.store(resolution: resolution)
            for name in ["relative.txt", "relative-ghost.txt", "absolute.txt", "absolute-ghost.txt", "passwd", "ghost", "missing.txt"] {
                let answer = await store.read([name])
                #expect(answer == .notFound("\(name) is not in the bundle"), "\(name) gave \(answer)")
            }
        }
    }

    /// Through a provider: the same `miss`, never `forbidden` for one and `miss` for the other.
    @Test(arguments: resolutions)
    func theProviderAnswersALinkToAnExistingAndToAMissingFileOutsideAlike(resolution: BundleStore.Resolution) async throws {
        try await withFixture { fixture in
            try fixture.link("bundle/passwd", to: "/etc/passwd")
            try fixture.link("bundle/shadow", to: "/etc/no-such-file-\(getpid())")
            let provider = BundleProvider(store: try await fixture.store(resolution: resolution))
            let existing = await provider.perform(Request(path: "passwd"))
            let missing = await provider.perform(Request(path: "shadow"))
            #expect(existing == .miss(reason: "passwd is not in the bundle"))
            #expect(missing == .miss(reason: "shadow is not in the bundle"))
        }
    }

    @Test(arguments: resolutions)
    func aLinkedDirectoryInTheMiddlePointingOutsideIsAMiss(resolution: BundleStore.Resolution) async throws {
        try await withFixture { fixture in
            try fixture.write("outside/secret.txt", "secret")
            try fixture.makeDirectory("bundle/sub")
            try fixture.link("bundle/sub/out", to: "../../outside")
            try fixture.link("bundle/abs", to: fixture.outside)
            try fixture.link("bundle/etc", to: "/etc")
            let store = try await fixture.store(resolution: resolution)
            #expect(await store.read(["sub", "out", "secret.txt"]) == .notFound("sub/out/secret.txt is not in the bundle"))
            #expect(await store.read(["sub", "out", "nothing.txt"]) == .notFound("sub/out/nothing.txt is not in the bundle"))
            #expect(await store.read(["abs", "secret.txt"]) == .notFound("abs/secret.txt is not in the bundle"))
            #expect(await store.read(["etc", "passwd"]) == .notFound("etc/passwd is not in the bundle"))
        }
    }

    /// A `..` inside a link's target that climbs above the folder, even after going down
    /// first, or back in again afterwards.
    @Test(arguments: resolutions)
    func aDotDotInALinkTargetThatClimbsOutIsAMiss(resolution: BundleStore.Resolution) async throws {
        try await withFixture { fixture in
            try fixture.write("outside/secret.txt", "secret")
            try fixture.write("bundle/docs/page.txt", "page")
            try fixture.link("bundle/docs/up.txt", to: "../../outside/secret.txt")
            try fixture.link("bundle/down-up.txt", to: "docs/../../outside/secret.txt")
            // Out and back in: still out of bounds on the way.
            try fixture.link("bundle/round-trip.txt", to: "../bundle/docs/page.txt")
            let store = try await fixture.store(resolution: resolution)
            #expect(await store.read(["docs", "up.txt"]) == .notFound("docs/up.txt is not in the bundle"))
            #expect(await store.read(["down-up.txt"]) == .notFound("down-up.txt is not in the bundle"))
            #expect(await store.read(["round-trip.txt"]) == .notFound("round-trip.txt is not in the bundle"))
        }
    }

    @Test(arguments: resolutions)
    func aLinkToTheSiblingFolderWithTheRootAsPrefixIsAMiss(resolution: BundleStore.Resolution) async throws {
        // `bundle-evil` starts with the bytes of `bundle` but is not inside it.
        try await withFixture { fixture in
            try fixture.write("bundle-evil/secret.txt", "secret")
            try fixture.link("bundle/evil", to: "../bundle-evil/secret.txt")
            #expect(try await fixture.store(resolution: resolution).read(["evil"]).isNotFound)
        }
    }

    /// `é` as one scalar and as `e` + a combining accent are canonically equivalent, so Swift's
    /// `String` comparisons treat them alike, but they are different folders on Linux.
    @Test(arguments: resolutions)
    func aFolderWhoseNameIsOnlyCanonicallyEquivalentToTheRootIsOutside(resolution: BundleStore.Resolution) async throws {
        try await withFixture { fixture in
            try fixture.write("caf\u{e9}/page.txt", "inside")
            try fixture.write("cafe\u{301}/secret.txt", "secret")
            try fixture.link("caf\u{e9}/leak.txt", to: "../cafe\u{301}/secret.txt")
            let store = try await BundleStore(root: fixture.base + "/caf\u{e9}", on: fixture.loop, resolution: resolution)
            #expect(await store.read(["page.txt"]).body == Array("inside".utf8))
            let answer = await store.read(["leak.txt"])
            #expect(answer.isNotFound, "gave \(answer)")
        }
    }

    /// An absolute link is never followed, even one naming a file inside the folder (or a
    /// link outside that points back in): `openat2` resolves beneath the folder only.
    @Test(arguments: resolutions)
    func anAbsoluteLinkIsAMissEvenIntoTheBundle(resolution: BundleStore.Resolution) async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/real.txt", "real")
            try fixture.link("bundle/alias.txt", to: fixture.bundle + "/real.txt")
            try fixture.link("outside/back", to: fixture.bundle)
            try fixture.link("bundle/via.txt", to: fixture.outside + "/back/real.txt")
            let store = try await fixture.store(resolution: resolution)
            #expect(await store.read(["alias.txt"]) == .notFound("alias.txt is not in the bundle"))
            #expect(await store.read(["via.txt"]) == .notFound("via.txt is not in the bundle"))
            #expect(await store.read(["real.txt"]).body == Array("real".utf8))
        }
    }

    // MARK: - Links that stay inside

    /// Followed by `openat2`; the component walk follows no link at all, and says so with the
    /// same miss.
    @Test(arguments: resolutions)
    func relativeLinksThatStayInside(resolution: BundleStore.Resolution) async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/docs/real.html", "<p>real</p>")
            try fixture.link("bundle/alias.html", to: "docs/real.html")
            try fixture.link("bundle/docs/up.html", to: "../docs/./real.html")
            try fixture.link("bundle/shelf", to: "docs")
            let store = try await fixture.store(resolution: resolution)
            for path in [["alias.html"], ["docs", "up.html"], ["shelf", "real.html"]] {
                let answer = await store.read(path)
                if resolution == .beneath {
                    #expect(answer == .file(body: Array("<p>real</p>".utf8), contentType: "text/html; charset=utf-8"), "\(path)")
                } else {
                    #expect(answer == .notFound("\(path.joined(separator: "/")) is not in the bundle"), "\(path)")
                }
            }
            #expect(await store.read(["docs", "real.html"]).body == Array("<p>real</p>".utf8))
        }
    }

    // MARK: - A link swapped in while a read is under way

    /// A thread keeps exchanging `bundle/d` — a real folder holding `f.txt` — with a link to
    /// an outside folder holding an `f.txt` of its own (`renameat2(RENAME_EXCHANGE)`, so `d`
    /// is always one or the other), while the store reads `d/f.txt` over and over. Checking
    /// the path and then opening it (realpath, then open) serves the outside file whenever the
    /// exchange falls in between; an open that resolves beneath the folder in one step never
    /// does.
    @Test(.timeLimit(.minutes(1)), arguments: resolutions)
    func aLinkSwappedInDuringReadsNeverServesTheFileOutside(resolution: BundleStore.Resolution) async throws {
        typealias Renameat2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
        let symbol = try #require(dlsym(dlopen(nil, RTLD_NOW), "renameat2"), "glibc has renameat2")
        let exchange = unsafeBitCast(symbol, to: Renameat2.self)
        let renameExchange: UInt32 = 2
        try await withFixture { fixture in
            try fixture.write("bundle/d/f.txt", "inside")
            try fixture.write("outside/d/f.txt", "secret")
            try fixture.link("bundle/swap", to: "../outside/d")
            let store = try await fixture.store(resolution: resolution)
            let stop = Atomic<Bool>(false)
            let swaps = Atomic<Int>(0)
            let failures = Atomic<Int>(0)
            let (real, link) = (fixture.bundle + "/d", fixture.bundle + "/swap")
            let swapper = Thread {
                while !stop.load(ordering: .relaxed) {
                    if exchange(AT_FDCWD, real, AT_FDCWD, link, renameExchange) == 0 {
                        swaps.add(1, ordering: .relaxed)
                    } else {
                        failures.add(1, ordering: .relaxed)
                    }
                }
            }
            swapper.start()
            var inside = 0
            var leaked = 0
            let start = ContinuousClock.now
            // Two seconds of racing, and on a loaded machine longer, until some reads found the
            // inside file (each read is a trip through the loop's thread pool, shared by the suite).
            while ContinuousClock.now - start < .seconds(2) || (inside < 20 && ContinuousClock.now - start < .seconds(40)) {
                if case .file(let body, _) = await store.read(["d", "f.txt"]) {
                    if body == Array("secret".utf8) { leaked += 1 } else { inside += 1 }
                }
            }
            stop.store(true, ordering: .relaxed)
            while !swapper.isFinished { try await Task.sleep(for: .milliseconds(1)) }
            #expect(leaked == 0, "served the file outside \(leaked) times (and the inside one \(inside) times)")
            // The race was really run: the exchanges happened, and reads got the inside file.
            #expect(failures.load(ordering: .relaxed) == 0)
            #expect(swaps.load(ordering: .relaxed) > 100)
            #expect(inside > 0)
        }
    }

    // MARK: - The two ways of opening, as functions

    /// The component walk on its own: folders and the file without following any link,
    /// every bad component refused before anything is opened.
    @Test func theComponentWalkFollowsNoLink() throws {
        try withFolder { base in
            try write(base + "/root/a/b/file.txt", "nested")
            try write(base + "/outside/secret.txt", "secret")
            try makeLink(base + "/root/a/inside-link", to: "b")
            try makeLink(base + "/root/a/file-link.txt", to: "b/file.txt")
            try makeLink(base + "/root/out", to: "../outside")
            let root = open(base + "/root", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            try #require(root >= 0)
            defer { close(root) }

            let opened = FileSystem.openByWalking(from: root, ["a", "b", "file.txt"])
            guard case .descriptor(let descriptor) = opened else {
                Issue.record("expected a descriptor, got \(opened)")
                return
            }
            var buffer = [UInt8](repeating: 0, count: 16)
            #expect(read(descriptor, &buffer, buffer.count) == 6)
            #expect(Array(buffer.prefix(6)) == Array("nested".utf8))
            close(descriptor)

            #expect(FileSystem.openByWalking(from: root, ["a", "inside-link", "file.txt"]) == .failed(ENOTDIR))
            #expect(FileSystem.openByWalking(from: root, ["a", "file-link.txt"]) == .failed(ELOOP))
            #expect(FileSystem.openByWalking(from: root, ["out", "secret.txt"]) == .failed(ENOTDIR))
            #expect(FileSystem.openByWalking(from: root, ["a", "missing.txt"]) == .failed(ENOENT))
            #expect(FileSystem.openByWalking(from: root, ["a", "b", "file.txt", "more"]) == .failed(ENOTDIR))
            for components in [[], [".."], ["a", ".."], ["."], [""], ["a/b", "file.txt"], ["a\0"]] as [[String]] {
                #expect(FileSystem.openByWalking(from: root, components) == .failed(EINVAL), "\(components)")
            }
        }
    }

    /// `openat2` on its own: links that stay beneath the folder are followed, every way out —
    /// an absolute link, a `..` above it — is refused by the kernel, and so is a magic link of
    /// /proc even beneath the folder.
    @Test func openingBeneathFollowsOnlyLinksThatStayInside() throws {
        try withFolder { base in
            try write(base + "/root/a/b/file.txt", "nested")
            try write(base + "/outside/secret.txt", "secret")
            try makeLink(base + "/root/a/inside-link", to: "b")
            try makeLink(base + "/root/a/up-link.txt", to: "../a/b/file.txt")
            try makeLink(base + "/root/out", to: "../outside")
            try makeLink(base + "/root/absolute", to: base + "/root/a/b/file.txt")
            let root = open(base + "/root", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            try #require(root >= 0)
            defer { close(root) }

            for components in [["a", "b", "file.txt"], ["a", "inside-link", "file.txt"], ["a", "up-link.txt"]] {
                let opened = FileSystem.openBeneath(from: root, components)
                guard case .descriptor(let descriptor) = opened else {
                    Issue.record("\(components): expected a descriptor, got \(opened)")
                    continue
                }
                close(descriptor)
            }
            #expect(FileSystem.openBeneath(from: root, ["out", "secret.txt"]) == .failed(EXDEV))
            #expect(FileSystem.openBeneath(from: root, ["out", "nothing.txt"]) == .failed(EXDEV))
            #expect(FileSystem.openBeneath(from: root, ["absolute"]) == .failed(EXDEV))
            #expect(FileSystem.openBeneath(from: root, ["..", "outside", "secret.txt"]) == .failed(EXDEV))
            // With `/` as the folder, /proc/self/root is beneath it, but a magic link.
            let system = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            try #require(system >= 0)
            defer { close(system) }
            #expect(FileSystem.openBeneath(from: system, ["proc", "self", "root", "etc", "passwd"]) == .failed(ELOOP))
            guard case .descriptor(let passwd) = FileSystem.openBeneath(from: system, ["etc", "passwd"]) else {
                Issue.record("/etc/passwd beneath / did not open")
                return
            }
            close(passwd)
        }
    }
}

/// Runs `body` with a fresh temporary folder, removed afterwards.
private func withFolder(_ body: (String) throws -> Void) throws {
    var template = Array("/tmp/monarch-bundle-walk-XXXXXX".utf8CString)
    guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
        throw POSIXFailure(call: "mkdtemp", code: errno)
    }
    let base = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    defer { try? FileManager.default.removeItem(atPath: base) }
    try body(base)
}

private func write(_ path: String, _ text: String) throws {
    let url = URL(fileURLWithPath: path)
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data(text.utf8).write(to: url)
}

private func makeLink(_ path: String, to target: String) throws {
    guard symlink(target, path) == 0 else { throw POSIXFailure(call: "symlink", code: errno) }
}
