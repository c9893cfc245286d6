#if canImport(Glibc)
import Glibc
#endif

/// Where a cluster started on the embedded default configuration keeps its sockets: a folder
/// of its own for each working directory, so `monarch up` and `monarch get` run in the same
/// folder meet there, clusters of different folders never do, and the folder served is left
/// untouched.
///
/// The folder is `$XDG_RUNTIME_DIR/monarch/ID`, else `/tmp/monarch-UID/ID`, where `ID` is 12
/// hexadecimal digits naming the working directory's absolute path.
public enum RuntimeDirectory {
    /// The runtime folder for the working directory `workingDirectory` (absolute), under
    /// `environment`'s `XDG_RUNTIME_DIR` when it is an absolute path, else under `/tmp`.
    public static func path(forWorkingDirectory workingDirectory: String, environment: [String: String]) -> String {
        root(environment: environment) + "/" + identifier(of: workingDirectory)
    }

    /// The folder every runtime folder of this user is in: `$XDG_RUNTIME_DIR/monarch`, else
    /// `/tmp/monarch-UID`.
    public static func root(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return (runtime.hasSuffix("/") ? String(runtime.dropLast()) : runtime) + "/monarch"
        }
        return "/tmp/monarch-\(getuid())"
    }

    /// 12 hexadecimal digits naming `path` (its 64-bit FNV-1a hash, the first 48 bits).
    public static func identifier(of path: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in path.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let text = String(hash >> 16, radix: 16)
        return String(repeating: "0", count: 12 - text.count) + text
    }

    /// The folder `path` is in: a socket's runtime folder, a runtime folder's root.
    public static func folder(containing path: String) -> String {
        String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
    }

    /// Creates the runtime folder `path` and its parent when missing (mode `0700`), and makes
    /// sure each is a real folder (not a link) that this user owns and nobody else may enter —
    /// in `/tmp`, another user could have made it first to take the sockets over.
    ///
    /// - Throws: ``ConfigError`` naming the folder and what is wrong with it.
    public static func prepare(_ path: String) throws(ConfigError) {
        for folder in [folder(containing: path), path] where !folder.isEmpty {
            if mkdir(folder, 0o700) == 0 {
                // mkdir applied the umask (which another thread may be holding narrower for a
                // moment, as a Unix socket is bound): the new folder is this process's to set.
                chmod(folder, 0o700)
            } else if errno != EEXIST {
                throw problem(folder, "cannot be created: \(String(cString: strerror(errno)))")
            }
            var info = stat()
            guard lstat(folder, &info) == 0 else { throw problem(folder, "cannot be read: \(String(cString: strerror(errno)))") }
            try checkOwnership(folder, info)
        }
    }

    /// Makes sure the runtime folder `path` and its parent, where they exist, are real
    /// folders this user owns and nobody else may enter, before a client trusts a socket in
    /// them; creates nothing (a folder not there means no cluster runs, which connecting says).
    ///
    /// - Throws: ``ConfigError`` naming the folder and what is wrong with it.
    public static func verify(_ path: String) throws(ConfigError) {
        for folder in [folder(containing: path), path] where !folder.isEmpty {
            var info = stat()
            guard lstat(folder, &info) == 0 else { return }
            try checkOwnership(folder, info)
        }
    }

    private static func checkOwnership(_ folder: String, _ info: stat) throws(ConfigError) {
        guard info.st_mode & S_IFMT == S_IFDIR else { throw problem(folder, "is not a folder (a link or a file is there)") }
        guard info.st_uid == getuid() else { throw problem(folder, "belongs to another user (uid \(info.st_uid))") }
        guard info.st_mode & 0o077 == 0 else {
            throw problem(folder, "may be entered by other users (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 700 it")
        }
    }

    private static func problem(_ folder: String, _ what: String) -> ConfigError {
        ConfigError(file: nil, keyPath: "listen", problem: "the runtime folder \(folder) \(what)")
    }
}
