import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// Keeps the cache's files to their owner: cached bodies may be private, so neither the
/// process's umask nor an older file's mode may leave them readable by others.
///
/// - The folders the worker creates for the file are `0700`; folders that already exist are
///   the operator's and stay as they are.
/// - The database is created `0600` before SQLite opens it. SQLite gives its `-wal` and
///   `-shm` files the database file's mode, so they are `0600` too.
/// - A database file of this store that exists with group or other permissions (made by an
///   older version, or by hand) loses them when opened, and so do its `-wal` and `-shm`.
enum PrivateFiles {
    /// The mode of the folders the worker creates.
    static let folderMode: mode_t = 0o700
    /// The mode of the database file the worker creates.
    static let fileMode: mode_t = 0o600

    /// Creates the folder that holds `path`, and its missing parents, each `0700` whatever
    /// the umask; existing folders are left alone.
    ///
    /// - Throws: ``SQLiteStoreError`` (`.sqlite(code: SQLITE_CANTOPEN)`) naming the folder
    ///   that could not be created.
    static func createFolder(containing path: String) throws(SQLiteStoreError) {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return }
        var folder = path.hasPrefix("/") ? "" : "."
        for component in path[..<slash].split(separator: "/") {
            folder += "/" + component
            if mkdir(folder, folderMode) == 0 {
                // mkdir applied the umask; the folder is new, and this process's to set.
                chmod(folder, folderMode)
            } else if errno != EEXIST {
                let code = errno
                throw SQLiteStoreError(
                    .sqlite(code: SQLITE_CANTOPEN),
                    "cannot create the folder \(folder): \(String(cString: strerror(code)))")
            }
        }
    }

    /// Creates the database file at `path`, empty and `0600` whatever the umask, when there is
    /// none; leaves an existing one alone. Failures are left to SQLite's open to report.
    static func createDatabaseIfMissing(_ path: String) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, fileMode)
        guard descriptor >= 0 else { return }
        fchmod(descriptor, fileMode)
        close(descriptor)
    }

    /// Takes group and other permissions away from the database at `path` and its `-wal` and
    /// `-shm` files, where they exist and have any.
    ///
    /// - Returns: one sentence per file whose mode could not be checked or changed.
    static func restrict(_ path: String) -> [String] {
        var problems: [String] = []
        for file in [path, path + "-wal", path + "-shm"] {
            let descriptor = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
            guard descriptor >= 0 else {
                if errno != ENOENT { problems.append("cannot open \(file) to check its mode: \(describe(errno))") }
                continue
            }
            defer { close(descriptor) }
            var status = stat()
            guard fstat(descriptor, &status) == 0 else {
                problems.append("cannot read the mode of \(file): \(describe(errno))")
                continue
            }
            guard (status.st_mode & S_IFMT) == S_IFREG, status.st_mode & 0o077 != 0 else { continue }
            if fchmod(descriptor, status.st_mode & 0o700) != 0 {
                problems.append(
                    "\(file) is readable by others (mode \(String(status.st_mode & 0o777, radix: 8))) and cannot be restricted: \(describe(errno))")
            }
        }
        return problems
    }

    private static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}
