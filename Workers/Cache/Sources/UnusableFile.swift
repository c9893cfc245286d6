#if canImport(Glibc)
import Glibc
#endif

/// Moves a cache file that cannot be used out of the way, so a fresh one can take its place
/// and the damaged one is kept for a person to look at.
enum UnusableFile {
    /// Renames `path` to `PATH.corrupt-<unix time>` (with `-1`, `-2`, … added when that name
    /// is taken), and its `-wal` and `-shm` companions beside it. A companion that does not
    /// exist is fine; so is a main file that vanished meanwhile. The connection must be closed.
    ///
    /// - Returns: the new path of the main file.
    /// - Throws: ``SQLiteStoreError`` (`cannotMoveAside`) when a rename fails.
    static func moveAside(_ path: String, now: Int = time(nil)) throws(SQLiteStoreError) -> String {
        var target = "\(path).corrupt-\(now)"
        var attempt = 0
        while exists(target) || exists(target + "-wal") {
            attempt += 1
            target = "\(path).corrupt-\(now)-\(attempt)"
        }
        for suffix in ["", "-wal", "-shm"] {
            guard rename(path + suffix, target + suffix) == 0 else {
                let code = errno
                if code == ENOENT { continue }
                throw SQLiteStoreError(
                    .cannotMoveAside,
                    "cannot move \(path + suffix) aside to \(target + suffix): \(String(cString: strerror(code)))")
            }
        }
        return target
    }

    private static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }
}
