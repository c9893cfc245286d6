#if canImport(Glibc)
import Glibc
#endif
import MonarchLoop
import Synchronization

/// Serves files under one folder, and never anything outside it.
///
/// A path arrives as decoded components. A component that is empty, `.`, `..`, or holds a `/`
/// or a NUL byte is refused before the file system is touched. Unless ``serveDotfiles``, a
/// path with a component starting with `.` (`.env`, `.git/config`) is a miss, answered exactly
/// as a file that is not there.
///
/// The file is then opened relative to the folder in one step, so nothing swapped in between a
/// check and the open can redirect it:
/// - ``Resolution/beneath`` (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`):
///   relative symbolic links that stay inside the folder are followed (`alias.html ->
///   docs/real.html`, `docs/up.html -> ../docs/real.html`); absolute links — even ones
///   pointing back inside — and links whose `..` would climb out are not.
/// - ``Resolution/componentWalk`` (the fallback where the kernel has no `openat2` or a seccomp
///   filter forbids it): each component is opened with `O_NOFOLLOW`, so no symbolic link is
///   followed at all, even one that stays inside.
///
/// A link that is not followed is a miss with the same reason as a file that is not there
/// ("… is not in the bundle"), whether its target exists or not: answers never tell whether a
/// file outside the folder exists. (nginx's `disable_symlinks on` answers such links alike.)
///
/// Only regular files are read (a FIFO or device is refused, and never opened in a way that
/// could block), up to ``effectiveMaxFileBytes``; a larger one is ``BundleAnswer/tooLarge(_:)``.
/// All file system work runs on the loop's thread pool.
public struct BundleStore: Sendable {
    /// How files are opened beneath the folder.
    public enum Resolution: Sendable, Equatable, CustomStringConvertible {
        /// `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`: relative links that stay inside
        /// are followed.
        case beneath
        /// Component by component with `O_NOFOLLOW`: no symbolic link is followed.
        case componentWalk

        /// How files are opened, in words, for the worker's log at start.
        public var description: String {
            switch self {
            case .beneath: "openat2 beneath the folder (relative links inside it are followed)"
            case .componentWalk: "component by component without following links (no openat2 here)"
            }
        }
    }

    /// The default for ``maxFileBytes``: 12 533 760 bytes, the largest body that fits, in
    /// base64, in a frame of the protocol's default 16 MiB with 64 KiB kept for the rest of
    /// the message.
    public static let defaultMaxFileBytes = 12_533_760

    /// The folder, as an absolute path with its links resolved.
    public let root: String
    /// The largest file served, as configured.
    public let maxFileBytes: Int
    /// Whether paths with a component starting with `.` are served.
    public let serveDotfiles: Bool
    /// How files are opened beneath ``root``.
    public let resolution: Resolution
    private let loop: EventLoop
    /// The largest body a frame to the coordinator carries (`Int.max` until told).
    private let frameBodyBytes: FrameBodyLimit

    /// Opens the bundle at `root`.
    ///
    /// - Parameters:
    ///   - maxFileBytes: the largest file served, in bytes.
    ///   - serveDotfiles: whether paths with a component starting with `.` are served
    ///     (default: they are misses).
    ///   - resolution: how files are opened; nil (the default) picks ``Resolution/beneath``
    ///     when the kernel allows `openat2`, else ``Resolution/componentWalk``.
    /// - Throws: ``BundleStoreError`` when `root` does not exist or is not a directory.
    public init(
        root: String, on loop: EventLoop, maxFileBytes: Int = defaultMaxFileBytes, serveDotfiles: Bool = false,
        resolution: Resolution? = nil
    ) async throws(BundleStoreError) {
        let resolved: FileSystem.Resolved
        let probed: Resolution
        do {
            (resolved, probed) = try await loop.runOnThreadPool {
                let resolved = FileSystem.resolve(root)
                guard case .directory(let path) = resolved else { return (resolved, .beneath) }
                return (resolved, resolution ?? FileSystem.probeResolution(root: path))
            }
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
        self.serveDotfiles = serveDotfiles
        self.resolution = probed
        self.frameBodyBytes = FrameBodyLimit()
    }

    /// The largest file served now: the smaller of ``maxFileBytes`` and the largest body a
    /// frame to the coordinator carries (see ``limitBodies(toFitFrameBodiesOf:)``).
    public var effectiveMaxFileBytes: Int { min(maxFileBytes, frameBodyBytes.value) }

    /// Caps the files served at `bytes`, the largest body a frame to the coordinator carries
    /// (the worker learns it from the coordinator's `welcome`); ``maxFileBytes`` still applies
    /// when smaller. Shared by every copy of this store.
    public func limitBodies(toFitFrameBodiesOf bytes: Int) {
        frameBodyBytes.value = max(0, bytes)
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
        if !serveDotfiles && components.contains(where: { $0.utf8.first == UInt8(ascii: ".") }) {
            // Answered exactly as a file that is not there.
            return .notFound(FileSystem.notInBundle(display))
        }
        let (root, resolution) = (self.root, self.resolution)
        let limit = effectiveMaxFileBytes
        let limitReason = limit < maxFileBytes
            ? "the largest body a frame to the coordinator carries" : "the bundle's file size limit"
        do {
            return try await loop.runOnThreadPool {
                FileSystem.load(
                    root: root, components, resolution: resolution, limit: limit, limitReason: limitReason,
                    display: display)
            }
        } catch {
            return .failed("\(display): \(error)")
        }
    }
}

/// A body size limit shared by the copies of a store and changed while it serves.
private final class FrameBodyLimit: Sendable {
    private let bytes = Atomic<Int>(Int.max)

    var value: Int {
        get { bytes.load(ordering: .relaxed) }
        set { bytes.store(newValue, ordering: .relaxed) }
    }
}
