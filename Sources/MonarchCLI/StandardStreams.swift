#if canImport(Glibc)
import Glibc
#endif

/// Writes `text` and a newline to standard error.
func printToStandardError(_ text: String) {
    writeAll(Array((text + "\n").utf8), to: STDERR_FILENO)
}

/// Writes all of `bytes` to the file descriptor, however many calls it takes.
func writeAll(_ bytes: [UInt8], to fd: Int32) {
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return }
        offset += written
    }
}

/// Flushes what `print` buffered for standard output (a pipe is block-buffered): a line a
/// reader waits for goes out now.
func flushStandardOutput() {
    fflush(nil)  // every output stream: `stdout` itself is a global Swift 6 will not read
}
