#if canImport(Glibc)
import Glibc
#endif
import MonarchConfig
import MonarchCoordinator
import MonarchWire

/// Keeps a second `monarch up` from starting on the sockets of one that runs: a lock file
/// beside the configuration's first Unix socket (`SOCKET.lock`), held for as long as the
/// process lives and naming its pid.
///
/// The lock goes with the process however it ends (the kernel drops it), and workers do not
/// inherit it. A configuration with no Unix socket has no lock; binding its TCP addresses is
/// then what refuses a second cluster.
final class ClusterLock {
    /// The lock file.
    let path: String
    private let descriptor: Int32

    /// Why a lock could not be taken.
    struct Refusal: Error, CustomStringConvertible {
        /// What to tell the user.
        let description: String
    }

    /// Takes the lock of `configuration`, before any of its sockets is touched; nil when it
    /// listens on no Unix socket.
    ///
    /// - Throws: ``Refusal`` when another live process holds it (naming its pid), or the file
    ///   cannot be made.
    static func acquire(for configuration: Configuration) throws(Refusal) -> ClusterLock? {
        let addresses = configuration.listen.clients + [configuration.listen.workers]
        guard let socket = addresses.lazy.compactMap({ address -> String? in
            if case .unix(let path) = address { return path }
            return nil
        }).first else { return nil }
        let path = socket + ".lock"
        Coordinator.createParentDirectory(of: path)
        while true {
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard descriptor >= 0 else {
                throw Refusal(description: "cannot open the lock file \(path): \(String(cString: strerror(errno)))")
            }
            if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
                let holder = readPid(descriptor)
                close(descriptor)
                throw Refusal(description: """
                    a cluster is already running here\(holder.map { " (pid \($0))" } ?? ""): it holds \(path) and \
                    listens on \(addresses.map(\.description).joined(separator: ", ")). \
                    Stop it first\(holder.map { " (kill -TERM \($0))" } ?? ""), or give this one other sockets with --config.
                    """)
            }
            // A stopping cluster may have removed the file between our open and our lock: then
            // the lock is on a file nobody else will find, so take the one now at the path.
            guard isStill(descriptor, at: path) else {
                close(descriptor)
                continue
            }
            let pid = "\(getpid())\n"
            _ = ftruncate(descriptor, 0)
            _ = pid.withCString { pwrite(descriptor, $0, strlen($0), 0) }
            return ClusterLock(path: path, descriptor: descriptor)
        }
    }

    /// Removes the lock file and lets the lock go (at a clean stop).
    func release() {
        unlink(path)
        close(descriptor)
    }

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    private static func readPid(_ descriptor: Int32) -> Int? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int(String(decoding: buffer[..<count].filter { (48...57).contains($0) }, as: UTF8.self))
    }

    private static func isStill(_ descriptor: Int32, at path: String) -> Bool {
        var held = stat()
        var named = stat()
        guard fstat(descriptor, &held) == 0, stat(path, &named) == 0 else { return false }
        return held.st_dev == named.st_dev && held.st_ino == named.st_ino
    }
}
