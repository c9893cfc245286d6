#if canImport(Glibc)
import Glibc
#endif
import MonarchLoop

/// Serves files under one folder, and never anything outside it.
///
/// A path arrives as decoded components. A component that is empty, `.`, `..`, or holds a `/`
/// or a NUL byte is refused before the file system is touched. The joined path is then
/// resolved with every symbolic link followed, and refused unless it still lies inside the
/// folder — so links that stay inside are served and links that point out (to a file, or a
/// directory in the middle of the path) are not. Only regular files are read (a FIFO or device
/// is never opened for reading in a way that could block), up to a size limit. All file system
/// work runs on the loop's thread pool.
public struct BundleStore: Sendable {
    /// The folder, as an absolute path with its links resolved.
    public let root: String
    /// The largest file served.
    public let maxFileBytes: Int
    private let loop: EventLoop

    /// Opens the bundle at `root`.
    ///
    /// - Throws: ``BundleStoreError`` when `root` does not exist or is not a directory.
    public init(root: String, on loop: EventLoop, maxFileBytes: Int = 12 << 20) async throws(BundleStoreError) {
        let resolved: FileSystem.Resolved
        do {
            resolved = try await loop.runOnThreadPool { FileSystem.resolve(root) }
        } catch {
            throw BundleStoreError(message: "cannot open the bundle \(root): \(error)")
        }
        switch resolved {
        case .directory(let path): self.root = path
        case .file: throw BundleStoreError(message: "the bundle \(root) is not a directory")
        case .missing: throw BundleStoreError(message: "the bundle folder \(root) does not exist")
        case .error(let message): throw BundleStoreError(message: "cannot open the bundle \(root): \(message)")
        }
        self.loop = loop
        self.maxFileBytes = maxFileBytes
    }

    /// The file the decoded path `components` names under the folder, or why there is none.
    public func read(_ components: [String]) async -> BundleAnswer {
        guard !components.isEmpty else { return .refused("the path names no file") }
        for component in components {
            if component.isEmpty || component == "." || component == ".." {
                return .refused("the path component \"\(component)\" is not allowed")
            }
            // Bytes, not Characters: a "/" followed by a combining mark is one Character.
            if component.utf8.contains(UInt8(ascii: "/")) || component.utf8.contains(0) {
                return .refused("a path component holds a slash or a NUL byte")
            }
        }
        let display = components.joined(separator: "/")
        let candidate = root + "/" + display
        let (root, limit) = (self.root, maxFileBytes)
        do {
            return try await loop.runOnThreadPool {
                switch FileSystem.resolve(candidate) {
                case .missing: return .notFound("\(display) is not in the bundle")
                case .error(let message): return .failed("\(display): \(message)")
                case .directory(let path), .file(let path):
                    guard Self.isInside(path, root: root) else { return .refused("\(display) resolves outside the bundle") }
                    return FileSystem.readRegularFile(path, limit: limit, display: display)
                }
            }
        } catch {
            return .failed("\(display): \(error)")
        }
    }

    /// Whether the resolved `path` lies strictly under the resolved `root`, comparing bytes:
    /// `String.hasPrefix` compares with canonical equivalence, so it takes `cafe\u{301}/x` to
    /// lie under `caf\u{e9}`, two different folders on Linux.
    static func isInside(_ path: String, root: String) -> Bool {
        let prefix = root.hasSuffix("/") ? root : root + "/"
        return path.utf8.count > prefix.utf8.count && path.utf8.starts(with: prefix.utf8)
    }
}
