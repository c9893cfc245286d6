#if canImport(Glibc)
import Glibc
#endif

/// Whether a local process is getting anywhere, from `/proc/PID/stat`: its scheduler state and
/// the CPU time it has used. A worker whose loop is starved of CPU on a saturated machine goes
/// silent like a dead one, but it stays runnable and its CPU time keeps growing; a stopped or
/// stuck one does neither.
struct ProcessProgress: Equatable {
    /// The state letter: `R` running, `S` sleeping, `D` waiting on a disk, `T` stopped, `Z` a zombie, …
    let state: Character
    /// User and system CPU time used so far, in clock ticks.
    let cpuTicks: Int

    /// The progress of `pid` now; nil when it cannot be read (the process is gone).
    static func read(pid: Int32) -> ProcessProgress? {
        let descriptor = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return parse(buffer[..<count])
    }

    /// The progress `/proc/PID/stat`'s text `bytes` gives: after the command name in
    /// parentheses (which may hold spaces and parentheses itself), field 3 is the state and
    /// fields 14 and 15 the user and system time.
    static func parse(_ bytes: ArraySlice<UInt8>) -> ProcessProgress? {
        guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        // fields[0] is the state (field 3); fields[11] and fields[12] are fields 14 and 15.
        guard fields.count > 12, let state = fields[0].first,
            let user = Int(String(decoding: fields[11], as: UTF8.self)),
            let system = Int(String(decoding: fields[12], as: UTF8.self))
        else { return nil }
        return ProcessProgress(state: Character(UnicodeScalar(state)), cpuTicks: user + system)
    }

    /// Whether a process that was at `earlier` and is at `self` now is alive and working, only
    /// short of CPU: runnable now (waiting for a CPU: an idle worker woken by a ping it has not
    /// been given the time to answer uses none), or sleeping with more CPU time used than
    /// before; never stopped, traced, a zombie or dead.
    func isBusy(since earlier: ProcessProgress) -> Bool {
        state == "R" || ("SD".contains(state) && cpuTicks > earlier.cpuTicks)
    }
}
