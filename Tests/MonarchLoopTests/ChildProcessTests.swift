import Foundation
import MonarchLoop
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Starts a child on `loop` from any task; `onExit` runs on the loop thread.
private func spawn(
    _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
    workingDirectory: String? = nil, newSession: Bool = false, on loop: EventLoop,
    onExit: @escaping @Sendable (ChildProcess.Exit) -> Void = { _ in }
) async throws -> ChildProcess {
    try await loop.submit {
        try ChildProcess(
            executable: executable, arguments: arguments, environment: environment,
            workingDirectory: workingDirectory, newSession: newSession, on: loop, onExit: onExit)
    }
}

/// Field `index` (1-based, as in proc(5)) of /proc/PID/stat.
private func procStatField(_ pid: Int32, _ index: Int) throws -> Int32? {
    let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
    // The command (field 2) is in parentheses and may hold spaces: count from after it.
    guard let close = stat.lastIndex(of: ")") else { return nil }
    let rest = stat[stat.index(after: close)...].split(separator: " ")
    let position = index - 3
    guard rest.indices.contains(position) else { return nil }
    return Int32(rest[position])
}

@Suite struct ChildProcessTests {
    @Test func reportsTheExitStatus() async throws {
        try await withLoop { loop in
            let child = try await spawn("/bin/sh", ["-c", "exit 3"], on: loop)
            #expect(child.pid > 0)
            #expect(await child.waitForExit() == ChildProcess.Exit(status: 3, signal: 0))
            #expect(try await loop.submit { child.exit } == ChildProcess.Exit(status: 3, signal: 0))
        }
    }

    @Test func findsAnExecutableInThePath() async throws {
        try await withLoop { loop in
            let child = try await spawn("sh", ["-c", "exit 0"], on: loop)
            #expect(await child.waitForExit() == ChildProcess.Exit(status: 0, signal: 0))
        }
    }

    @Test func aSignalEndsTheChild() async throws {
        try await withLoop { loop in
            let child = try await spawn("/bin/sleep", ["30"], on: loop)
            try await loop.submit { child.signal(SIGTERM) }
            let exit = await child.waitForExit()
            #expect(exit.signal == SIGTERM)
            #expect(exit.description.contains("signal 15"))
            // Signalling an exited child does nothing.
            try await loop.submit { child.signal(SIGKILL) }
        }
    }

    @Test func aMissingExecutableThrowsENOENTAndLeavesNothingOpen() async throws {
        let loop = try EventLoop(name: "spawn-missing")
        for executable in ["/nonexistent/monarch-no-such-program", "monarch-no-such-program-in-path"] {
            let error = await #expect(throws: UVError.self) {
                try await spawn(executable, on: loop)
            }
            #expect(error?.name == "ENOENT")
        }
        // The loop still works.
        let child = try await spawn("/bin/sh", ["-c", "exit 0"], on: loop)
        #expect(await child.waitForExit().status == 0)
        let report = loop.shutdown()
        #expect(report.loopClosed)
        #expect(report.handlesLeftOpen == 0)
    }

    @Test func aMissingWorkingDirectoryThrows() async throws {
        let loop = try EventLoop(name: "spawn-bad-cwd")
        let error = await #expect(throws: UVError.self) {
            try await spawn("/bin/sh", ["-c", "exit 0"], workingDirectory: "/nonexistent/monarch-no-such-dir", on: loop)
        }
        #expect(error?.name == "ENOENT")
        let report = loop.shutdown()
        #expect(report.loopClosed)
        #expect(report.handlesLeftOpen == 0)
    }

    @Test func theEnvironmentIsPassed() async throws {
        try await withLoop { loop in
            let script = ["-c", #"test "$X" = yes"#]
            let yes = try await spawn("/bin/sh", script, environment: ["X": "yes"], on: loop)
            #expect(await yes.waitForExit() == ChildProcess.Exit(status: 0, signal: 0))
            let no = try await spawn("/bin/sh", script, environment: ["X": "no"], on: loop)
            #expect(await no.waitForExit().status != 0)
            let none = try await spawn("/bin/sh", script, environment: [:], on: loop)
            #expect(await none.waitForExit().status != 0)
        }
    }

    @Test func theEnvironmentReplacesOurs() async throws {
        try await withLoop { loop in
            // HOME is set for this process, but not for a child given an environment.
            let child = try await spawn("/bin/sh", ["-c", #"test -z "${HOME+set}""#], environment: ["A": "1"], on: loop)
            #expect(await child.waitForExit().status == 0)
        }
    }

    @Test func theWorkingDirectoryIsHonoured() async throws {
        try await withLoop { loop in
            let child = try await spawn("/bin/sh", ["-c", #"test "$(pwd -P)" = /"#], workingDirectory: "/", on: loop)
            #expect(await child.waitForExit() == ChildProcess.Exit(status: 0, signal: 0))
            let tmp = try await spawn("/bin/sh", ["-c", #"test "$(pwd)" = /tmp"#], workingDirectory: "/tmp", on: loop)
            #expect(await tmp.waitForExit() == ChildProcess.Exit(status: 0, signal: 0))
        }
    }

    @Test func aNewSessionChildHasASessionOfItsOwn() async throws {
        try await withLoop { loop in
            let ours = getsid(0)
            let detached = try await spawn("/bin/sleep", ["30"], newSession: true, on: loop)
            let attached = try await spawn("/bin/sleep", ["30"], on: loop)
            // uv_spawn returns once the child has exec'd, so setsid has already run.
            let detachedSession = try procStatField(detached.pid, 6)
            let attachedSession = try procStatField(attached.pid, 6)
            try await loop.submit {
                detached.signal(SIGKILL)
                attached.signal(SIGKILL)
            }
            #expect(detachedSession == detached.pid)
            #expect(detachedSession != ours)
            #expect(attachedSession == ours)
            #expect(await detached.waitForExit().signal == SIGKILL)
            #expect(await attached.waitForExit().signal == SIGKILL)
        }
    }

    @Test func onExitRunsOnceOnTheLoopThread() async throws {
        let calls = Mutex<[ChildProcess.Exit]>([])
        let onLoop = Mutex(true)
        let loop = try EventLoop(name: "spawn-on-exit")
        let child = try await spawn("/bin/sh", ["-c", "exit 5"], on: loop) { exit in
            calls.withLock { $0.append(exit) }
            if !loop.inEventLoop { onLoop.withLock { $0 = false } }
        }
        let exit = await child.waitForExit()
        // Waiters are resumed after onExit has run.
        #expect(calls.withLock { $0 } == [exit])
        try await loop.submit { child.signal(SIGTERM) }
        child.close()
        let report = loop.shutdown()
        #expect(report.handlesLeftOpen == 0)
        #expect(report.loopClosed)
        #expect(calls.withLock { $0 } == [ChildProcess.Exit(status: 5, signal: 0)])
        #expect(onLoop.withLock { $0 })
    }

    @Test func waitForExitAfterTheExitReturnsAtOnce() async throws {
        try await withLoop { loop in
            let child = try await spawn("/bin/sh", ["-c", "exit 7"], on: loop)
            let first = await child.waitForExit()
            #expect(await child.waitForExit() == first)
            #expect(await child.waitForExit() == ChildProcess.Exit(status: 7, signal: 0))
        }
    }

    @Test func manyWaitersAllLearnTheExit() async throws {
        try await withLoop { loop in
            let child = try await spawn("/bin/sleep", ["30"], on: loop)
            try await withThrowingTaskGroup(of: ChildProcess.Exit.self) { group in
                for _ in 0..<20 { group.addTask { await child.waitForExit() } }
                try await loop.submit { child.signal(SIGKILL) }
                for try await exit in group { #expect(exit.signal == SIGKILL) }
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aChildRunningAtShutdownReleasesItsWaiters() async throws {
        let loop = try EventLoop(name: "spawn-shutdown")
        let child = try await spawn("/bin/sleep", ["30"], on: loop)
        let waiter = Task { await child.waitForExit() }
        // The waiter may or may not have been registered before shutdown; neither may hang.
        let report = loop.shutdown()
        #expect(report.handlesLeftOpen == 1)
        #expect(report.loopClosed)
        #expect(await waiter.value == ChildProcess.Exit(status: -1, signal: 0))
        // After shutdown too.
        #expect(await child.waitForExit() == ChildProcess.Exit(status: -1, signal: 0))
        // The loop no longer reaps it: clean up ourselves.
        kill(child.pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(child.pid, &status, 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func waitForExitAfterTheLoopShutDownReturnsTheExit() async throws {
        let loop = try EventLoop(name: "spawn-after-shutdown")
        let child = try await spawn("/bin/sh", ["-c", "exit 4"], on: loop)
        #expect(await child.waitForExit().status == 4)
        loop.shutdown()
        #expect(await child.waitForExit() == ChildProcess.Exit(status: 4, signal: 0))
    }

    @Test(.timeLimit(.minutes(1)))
    func waitForExitOnAHandleClosedBeforeTheExitDoesNotHang() async throws {
        try await withLoop { loop in
            let child = try await spawn("/bin/sleep", ["30"], on: loop)
            let pid = child.pid
            await child.closeAndWait()
            #expect(await child.waitForExit() == ChildProcess.Exit(status: -1, signal: 0))
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
    }
}
