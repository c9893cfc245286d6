import CBundleShim
#if canImport(Glibc)
import Glibc
#endif

/// The blocking file system calls of the bundle, run on the thread pool.
///
/// A file is opened relative to a descriptor of the bundle folder, in one step that cannot
/// leave it (no path is resolved first and opened later, so a link swapped in between cannot
/// redirect the open): with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` where the
/// kernel has it, else by walking the components with `O_NOFOLLOW`.
enum FileSystem {
    /// What a path resolves to.
    enum Resolved {
        case directory(String)
        case file(String)
        case missing
        case error(String)
    }

    /// How an open beneath the folder ended: a descriptor the caller closes, or `errno`.
    enum Opened: Equatable {
        case descriptor(Int32)
        case failed(Int32)
    }

    /// Resolves every symbolic link of `path` (realpath) and says what it names. Used once, for
    /// the bundle folder itself, which the operator chose.
    static func resolve(_ path: String) -> Resolved {
        guard let real = realpath(path, nil) else {
            return errno == ENOENT || errno == ENOTDIR ? .missing : .error(describe(errno))
        }
        defer { free(real) }
        let resolved = String(cString: real)
        var status = stat()
        guard stat(resolved, &status) == 0 else { return .error(describe(errno)) }
        return (status.st_mode & S_IFMT) == S_IFDIR ? .directory(resolved) : .file(resolved)
    }

    /// Which way this kernel (and seccomp policy) lets files be opened beneath `root`: through
    /// `openat2` unless it answers `ENOSYS` or `EPERM`.
    static func probeResolution(root: String) -> BundleStore.Resolution {
        let folder = open(root, pathOnly | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { return .beneath }
        defer { close(folder) }
        let probe = monarch_open_beneath(folder, ".", pathOnly | O_DIRECTORY | O_CLOEXEC)
        if probe >= 0 {
            close(probe)
            return .beneath
        }
        return errno == ENOSYS || errno == EPERM ? .componentWalk : .beneath
    }

    /// `O_PATH`, which Swift's Glibc module does not define.
    static let pathOnly = monarch_o_path()

    /// The flags of the final open: read only; `O_NONBLOCK` so that opening a FIFO never waits
    /// for a writer, `O_NOCTTY` so that a terminal never becomes the worker's.
    static let fileFlags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY

    /// Opens `components` beneath the directory `root` with `openat2(RESOLVE_BENEATH |
    /// RESOLVE_NO_MAGICLINKS)`: symbolic links are followed as long as they stay beneath
    /// `root`; an absolute link, or a `..` that would climb above `root`, fails with `EXDEV`.
    /// When the kernel answers `ENOSYS`, or a seccomp filter `EPERM`, falls back to
    /// ``openByWalking(from:_:)``.
    static func openBeneath(from root: Int32, _ components: [String]) -> Opened {
        let path = components.joined(separator: "/")
        var attempts = 0
        while true {
            let descriptor = monarch_open_beneath(root, path, fileFlags)
            if descriptor >= 0 { return .descriptor(descriptor) }
            let code = errno
            attempts += 1
            switch code {
            case ENOSYS, EPERM:
                return openByWalking(from: root, components)
            case EAGAIN where attempts < 8:
                // A rename raced a `..` in the resolution: the kernel asks to try again.
                continue
            default:
                return .failed(code)
            }
        }
    }

    /// Opens `components` beneath the directory `root` one component at a time, never
    /// following a symbolic link: each folder with `openat(…, O_PATH | O_DIRECTORY |
    /// O_NOFOLLOW)`, the file with `openat(…, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)`. A link
    /// anywhere on the way fails the open (`ENOTDIR` for a folder, `ELOOP` for the file), even
    /// one that stays beneath `root`. A component that is empty, `.`, `..` or holds a `/` fails
    /// with `EINVAL` before anything is opened.
    static func openByWalking(from root: Int32, _ components: [String]) -> Opened {
        guard let last = components.last else { return .failed(EINVAL) }
        for component in components {
            if component.isEmpty || component == "." || component == ".." || component.utf8.contains(UInt8(ascii: "/"))
                || component.utf8.contains(0)
            {
                return .failed(EINVAL)
            }
        }
        var folder = root
        defer { if folder != root { close(folder) } }
        for component in components.dropLast() {
            let next = openat(folder, component, pathOnly | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else { return .failed(errno) }
            if folder != root { close(folder) }
            folder = next
        }
        let descriptor = openat(folder, last, fileFlags | O_NOFOLLOW)
        return descriptor >= 0 ? .descriptor(descriptor) : .failed(errno)
    }

    /// The answer for the decoded path `components` under the folder `root`, opened the way
    /// `resolution` says, read whole up to `limit` bytes.
    ///
    /// A path that is not there, leads through a file, or would leave the folder (a link out,
    /// absolute or relative, to something that exists or not) is the same miss —
    /// "`display` is not in the bundle" — so no answer tells whether anything outside exists.
    static func load(
        root: String, _ components: [String], resolution: BundleStore.Resolution, limit: Int, limitReason: String,
        display: String
    ) -> BundleAnswer {
        let folder = open(root, pathOnly | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { return .failed("the bundle folder cannot be opened: \(describe(errno))") }
        defer { close(folder) }
        let opened = resolution == .beneath ? openBeneath(from: folder, components) : openByWalking(from: folder, components)
        switch opened {
        case .descriptor(let descriptor):
            defer { close(descriptor) }
            return readRegularFile(descriptor, limit: limit, limitReason: limitReason, display: display)
        case .failed(let code):
            switch code {
            case ENOENT, ENOTDIR, ELOOP, EXDEV, ENAMETOOLONG:
                return .notFound(notInBundle(display))
            case ENXIO, ENODEV:
                return .refused("\(display) is not a regular file")
            default:
                return .failed("\(display): \(describe(code))")
            }
        }
    }

    /// The reason of every miss for a path that names no file the bundle serves.
    static func notInBundle(_ display: String) -> String { "\(display) is not in the bundle" }

    /// The bytes of the regular file open as `descriptor`, read whole up to `limit`.
    static func readRegularFile(_ descriptor: Int32, limit: Int, limitReason: String, display: String) -> BundleAnswer {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return .failed("\(display): \(describe(errno))") }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: return .notFound("\(display) is a directory")
        default: return .refused("\(display) is not a regular file")
        }
        guard Int(status.st_size) <= limit else {
            return .tooLarge("\(display) is \(status.st_size) bytes, more than the \(limit) bytes served (\(limitReason))")
        }
        var body = [UInt8](repeating: 0, count: Int(status.st_size))
        var filled = 0
        while true {
            if filled == body.count {
                // The file may have grown since fstat: look for more, within the limit.
                guard body.count < limit else {
                    var probe: UInt8 = 0
                    return read(descriptor, &probe, 1) > 0
                        ? .tooLarge("\(display) grew past the \(limit) bytes served (\(limitReason))")
                        : finished(body, display)
                }
                body.append(contentsOf: repeatElement(0, count: min(max(body.count, 4096), limit - body.count)))
            }
            let count = body.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failed("\(display): \(describe(errno))")
            }
            if count == 0 { break }
            filled += count
        }
        body.removeSubrange(filled...)
        return finished(body, display)
    }

    private static func finished(_ body: [UInt8], _ display: String) -> BundleAnswer {
        .file(body: body, contentType: ContentType.forFileName(display))
    }

    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
