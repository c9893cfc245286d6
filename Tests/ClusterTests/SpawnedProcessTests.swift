import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TestOrigins
import Testing

/// The tests' own posix_spawn helper (`TestOrigins`), which every test here starts processes
/// with.
@Suite("SpawnedProcess", .timeLimit(.minutes(1))) struct SpawnedProcessTests {
    /// Arguments, environment, exit status, standard output and error collected apart.
    @Test
    func exitStatusAndOutput() async throws {
        let child = try SpawnedProcess(
            executable: "/bin/sh", arguments: ["-c", "echo \"$1 $GREETING\"; echo oops >&2; exit 3", "sh", "hello"],
            environment: ["GREETING": "world"], standardInput: .null, standardOutput: .collect, standardError: .collect
        )
        #expect(try await child.waitForExit(timeout: .seconds(30)) == .exited(3))
        #expect(child.standardOutput.text == "hello world\n")
        #expect(child.standardError.text == "oops\n")
        #expect(ChildExit.exited(3).status == 3)
    }

    /// Standard input from a pipe the parent closes; standard error into standard output.
    @Test
    func inputPipeAndMergedError() async throws {
        let child = try SpawnedProcess(
            executable: "/bin/sh", arguments: ["-c", "cat; echo read-to-end >&2"],
            standardInput: .pipe, standardOutput: .collect, standardError: .standardOutput
        )
        // cat echoes a line through the pipe: it reads the parent's pipe, and is still running
        // once it has (it does not end before its input does).
        #expect(child.writeStandardInput("ping\n"))
        try await eventually("cat to echo the line") { child.standardOutput.text == "ping\n" }
        #expect(child.isRunning, "cat waits for its input")
        child.closeStandardInput()
        #expect(try await child.waitForExit(timeout: .seconds(30)) == .exited(0))
        #expect(child.standardOutput.text == "ping\nread-to-end\n")
    }

    /// A signal ends it; none is sent once it has been reaped.
    @Test
    func signals() async throws {
        let child = try SpawnedProcess(executable: "/bin/sleep", arguments: ["30"])
        #expect(child.signal(SIGTERM))
        let exit = try await child.waitForExit(timeout: .seconds(30))
        #expect(exit == .signalled(SIGTERM))
        #expect(exit?.status == 128 + SIGTERM)
        #expect(!child.isRunning)
        #expect(!child.signal(SIGTERM))
    }

    /// Its own process group, and none of the parent's descriptors beyond 0, 1 and 2.
    @Test
    func processGroupAndDescriptors() async throws {
        // A descriptor opened without close-on-exec, as a test's raw socket may be.
        let leaky = open("/dev/null", O_RDONLY)
        try #require(leaky > 2)
        defer { close(leaky) }
        let child = try SpawnedProcess(
            executable: "/bin/sh", arguments: ["-c", "cut -d ' ' -f 5 /proc/$$/stat; ls /proc/$$/fd"],
            standardInput: .null, standardOutput: .collect, standardError: .collect
        )
        #expect(try await child.waitForExit(timeout: .seconds(30)) == .exited(0))
        let lines = child.standardOutput.text.split(separator: "\n").map(String.init)
        #expect(lines.first == String(child.pid), "process group: \(lines)")
        #expect(Set(lines.dropFirst()) == ["0", "1", "2"], "descriptors: \(lines)")
        #expect(child.standardError.text.isEmpty)
    }

    /// A missing executable is an error thrown by the initializer.
    @Test
    func missingExecutable() {
        #expect(throws: SpawnFailure.self) {
            try SpawnedProcess(executable: "/nonexistent/program", arguments: [])
        }
    }
}
