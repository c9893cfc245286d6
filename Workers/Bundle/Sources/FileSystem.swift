#if canImport(Glibc)
import Glibc
#endif

/// The blocking file system calls of the bundle, run on the thread pool.
enum FileSystem {
    /// What a path resolves to.
    enum Resolved {
        case directory(String)
        case file(String)
        case missing
        case error(String)
    }

    /// Resolves every symbolic link of `path` (realpath) and says what it names.
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

    /// The bytes of the regular file at the resolved `path`, read whole up to `limit`.
    static func readRegularFile(_ path: String, limit: Int, display: String) -> BundleAnswer {
        // O_NONBLOCK: opening a FIFO never waits for a writer; O_NOFOLLOW: the path is resolved.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            return errno == ENOENT ? .notFound("\(display) is not in the bundle") : .failed("\(display): \(describe(errno))")
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return .failed("\(display): \(describe(errno))") }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: return .notFound("\(display) is a directory")
        default: return .refused("\(display) is not a regular file")
        }
        guard Int(status.st_size) <= limit else {
            return .failed("\(display) is \(status.st_size) bytes, more than the \(limit) served")
        }
        var body = [UInt8](repeating: 0, count: Int(status.st_size))
        var filled = 0
        while true {
            if filled == body.count {
                // The file may have grown since fstat: look for more, within the limit.
                guard body.count < limit else {
                    var probe: UInt8 = 0
                    return read(fd, &probe, 1) > 0 ? .failed("\(display) grew past the \(limit) bytes served") : finished(body, display)
                }
                body.append(contentsOf: repeatElement(0, count: min(max(body.count, 4096), limit - body.count)))
            }
            let count = body.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
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

    private static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
