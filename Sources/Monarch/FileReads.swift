#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Glibc

/// Reads files away from Swift's cooperative pool: on a serial dispatch queue of its own,
/// whose one thread may wait on the file system (a slow disk, a network mount, a FIFO with no
/// writer yet) while every task keeps running. The caller suspends; no pool thread blocks.
enum FileReads {
    /// Where the reads run, one at a time.
    private static let queue = DispatchQueue(label: "monarch.file-reads")

    /// The bytes of the file at `path` when it is there and is not a folder; nil otherwise
    /// (or when it cannot be read). Suspends the calling task until the read is over; the read
    /// itself runs on ``queue``, not on the caller's thread.
    static func contents(ofFileAt path: String) async -> Data? {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: readWhole(path)) }
        }
    }

    /// Reads the whole file at `path`, blocking the calling thread; nil for a folder, a file
    /// that is not there, or a read that fails.
    private static func readWhole(_ path: String) -> Data? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT != S_IFDIR else { return nil }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return data }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            data.append(contentsOf: chunk[..<count])
        }
    }
}
