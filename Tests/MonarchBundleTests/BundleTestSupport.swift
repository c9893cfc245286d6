import Foundation
import MonarchBundle
import MonarchLoop
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A temporary folder of one test's own: `bundle/` is the store's root and `outside/` a
/// sibling the store must never serve.
struct Fixture {
    /// The temporary folder holding both.
    let base: String
    let loop: EventLoop

    var bundle: String { base + "/bundle" }
    var outside: String { base + "/outside" }

    /// Writes `bytes` to `path` (relative to `base`), creating its folders.
    func write(_ path: String, _ bytes: [UInt8]) throws {
        let url = URL(fileURLWithPath: base + "/" + path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
    }

    func write(_ path: String, _ text: String) throws { try write(path, Array(text.utf8)) }

    func makeDirectory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: base + "/" + path, withIntermediateDirectories: true)
    }

    /// Makes a symbolic link at `path` (relative to `base`) holding `target` verbatim.
    func link(_ path: String, to target: String) throws {
        guard symlink(target, base + "/" + path) == 0 else { throw POSIXFailure(call: "symlink", code: errno) }
    }

    func makeFIFO(_ path: String) throws {
        guard mkfifo(base + "/" + path, 0o644) == 0 else { throw POSIXFailure(call: "mkfifo", code: errno) }
    }

    func store(
        maxFileBytes: Int = BundleStore.defaultMaxFileBytes, serveDotfiles: Bool = false,
        resolution: BundleStore.Resolution? = nil
    ) async throws -> BundleStore {
        try await BundleStore(
            root: bundle, on: loop, maxFileBytes: maxFileBytes, serveDotfiles: serveDotfiles, resolution: resolution)
    }
}

struct POSIXFailure: Error, CustomStringConvertible {
    let call: String
    let code: Int32
    var description: String { "\(call): \(String(cString: strerror(code)))" }
}

/// Runs `body` with a fresh loop and a fresh temporary folder holding empty `bundle/` and
/// `outside/` folders; afterwards removes the folder and checks the loop shut down cleanly.
func withFixture(_ body: (Fixture) async throws -> Void) async throws {
    var template = Array("/tmp/monarch-bundle-test-XXXXXX".utf8CString)
    let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    guard created != nil else { throw POSIXFailure(call: "mkdtemp", code: errno) }
    let base = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    let loop = try EventLoop(name: "bundle-test")
    let fixture = Fixture(base: base, loop: loop)
    do {
        try fixture.makeDirectory("bundle")
        try fixture.makeDirectory("outside")
        try await body(fixture)
    } catch {
        try? FileManager.default.removeItem(atPath: base)
        loop.shutdown()
        throw error
    }
    try FileManager.default.removeItem(atPath: base)
    let report = loop.shutdown()
    #expect(report.handlesLeftOpen == 0)
    #expect(report.loopClosed)
}

extension BundleAnswer {
    var isRefused: Bool { if case .refused = self { true } else { false } }
    var isNotFound: Bool { if case .notFound = self { true } else { false } }
    var isFailed: Bool { if case .failed = self { true } else { false } }
    var isTooLarge: Bool { if case .tooLarge = self { true } else { false } }
    var body: [UInt8]? { if case .file(let body, _) = self { body } else { nil } }
    var contentType: String? { if case .file(_, let type) = self { type } else { nil } }
}

/// The targets of this process's open file descriptors that lie under `folder` (resolved).
func descriptorsOpen(under folder: String) -> [String] {
    guard let resolved = realpath(folder, nil) else { return ["cannot resolve \(folder)"] }
    let folder = String(cString: resolved)
    free(resolved)
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return entries.compactMap { entry -> String? in
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/fd/" + entry, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return target.hasPrefix(folder + "/") || target == folder ? target : nil
    }
}
