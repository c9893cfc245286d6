import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MonarchWire
import TestOrigins
import Testing

/// What a new user meets following the README: commands that need no flags to find each
/// other, a ready line that comes last, `--version`, `--json` on one stream, a clean stop.
@Suite("First minutes")
struct FirstMinutesTests {
    /// This process's environment without the variables that would name a coordinator or
    /// move the embedded default's HTTP listener.
    static var cleanEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.filter { !["MONARCH_ADDRESS", "MONARCH_TOKEN", "MONARCH_HTTP"].contains($0.key) }
    }

    /// Starts `executable ARGUMENTS` in `folder` (a shell changes into it), standard error into
    /// standard output when `merged`.
    static func start(
        _ executable: String, _ arguments: [String], in folder: String, merged: Bool = false,
        environment: [String: String] = [:]
    ) throws -> SpawnedProcess {
        try SpawnedProcess(
            executable: "/bin/sh", arguments: ["-c", "cd \"$0\" && exec \"$@\"", folder, executable] + arguments,
            environment: cleanEnvironment.merging(environment) { $1 }, standardInput: .null, standardOutput: .collect,
            standardError: merged ? .standardOutput : .collect)
    }

    /// Runs `monarch ARGUMENTS` in `folder` to its end: exit status, standard output, standard error.
    static func monarch(
        _ arguments: [String], in folder: String, monarch: String = Executables.monarch,
        environment: [String: String] = [:]
    ) async throws -> (status: Int32, stdout: String, stderr: String) {
        let process = try start(monarch, arguments, in: folder, environment: environment)
        guard let exit = try await process.waitForExit(timeout: .seconds(60)) else {
            _ = process.signal(SIGKILL)
            throw SpawnError("monarch \(arguments) still running after 60 s")
        }
        return (exit.status, process.standardOutput.text, process.standardError.text)
    }

    /// Waits for a line containing `text` in what `process` printed.
    static func waitFor(_ text: String, from process: SpawnedProcess) async throws {
        try await eventually("\"\(text)\" from \(process.commandLine)", timeout: 60) {
            if let exit = process.exit {
                throw SpawnError("exited (\(exit)) before \"\(text)\":\n\(process.standardOutput.text)\(process.standardError.text)")
            }
            return process.standardOutput.text.contains(text)
        }
    }

    /// Stops `monarch up` with SIGINT and returns its exit status.
    static func interrupt(_ process: SpawnedProcess) async throws -> Int32 {
        _ = process.signal(SIGINT)
        guard let exit = try await process.waitForExit(timeout: .seconds(30)) else {
            _ = process.signal(SIGKILL)
            throw SpawnError("monarch up still running 30 s after SIGINT")
        }
        return exit.status
    }

    @Test("monarch and every worker print the release's version")
    func versions() async throws {
        for executable in ["monarch", "monarch-bundle-worker", "monarch-cache-worker", "monarch-network-worker"] {
            let run = try await Spawned.run(Executables.directory + "/" + executable, ["--version"])
            #expect(run.status == 0, "\(executable): \(run.stderr)")
            #expect(String(decoding: run.stdout, as: UTF8.self) == MonarchRelease.version + "\n", "\(executable)")
        }
    }

    @Test("monarch up with no monarch.yml serves the folder it runs in, writes nothing there, refuses a second up on its sockets, and answers monarch get and ping run there; the ready line is the last line until Ctrl-C")
    func embeddedDefaultServesAnyFolder() async throws {
        try await ClusterGate.inTurn { try await embeddedDefaultServesAnyFolderBody() }
    }

    private func embeddedDefaultServesAnyFolderBody() async throws {
        let folder = try TemporaryFolder()
        let runtime = try TemporaryFolder()
        defer {
            folder.remove()
            runtime.remove()
        }
        try folder.write("hello.txt", "Hello from any folder.\n")
        try folder.write(".env", "SECRET=1\n")
        // HTTP on a port of the kernel's choosing, not the default 8080, which the tests of
        // other checkouts on this machine (or anything else) may hold.
        let environment = ["XDG_RUNTIME_DIR": runtime.path, "MONARCH_HTTP": "tcp:127.0.0.1:0"]
        let up = try Self.start(Executables.monarch, ["up"], in: folder.path, merged: true, environment: environment)
        defer { _ = up.signal(SIGKILL) }
        try await Self.waitFor("ready", from: up)
        #expect(up.standardOutput.text.contains("no monarch.yml in \(folder.path)"), "\(up.standardOutput.text)")

        // The README's first request: curl localhost:8080/hello.txt (here, the port chosen).
        let port = try #require(HTTPFetch.port(inOutput: up.standardOutput.text), "\(up.standardOutput.text)")
        let hello = try await HTTPProbe.exchange(HTTPProbe.request("GET", "/hello.txt"), port: port).text
        #expect(hello.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(hello)")
        #expect(hello.lowercased().contains("content-type: text/plain"), "\(hello)")
        #expect(hello.hasSuffix("\r\n\r\nHello from any folder.\n"), "\(hello)")
        let hidden = try await HTTPProbe.exchange(HTTPProbe.request("GET", "/.env"), port: port).text
        #expect(hidden.hasPrefix("HTTP/1.1 404 "), "\(hidden)")
        #expect(!hidden.contains("SECRET"), "\(hidden)")

        let get = try await Self.monarch(["get", "hello.txt"], in: folder.path, environment: environment)
        #expect(get.status == 0, "\(get.stderr)")
        #expect(get.stdout == "Hello from any folder.\n")
        let dotfile = try await Self.monarch(["get", ".env"], in: folder.path, environment: environment)
        #expect(dotfile.status == 1, "\(dotfile.stdout)")
        #expect(!dotfile.stdout.contains("SECRET"))

        let ping = try await Self.monarch(["ping"], in: folder.path, environment: environment)
        #expect(ping.status == 0, "\(ping.stderr)")
        #expect(ping.stdout.hasPrefix("PONG from unix:\(runtime.path)/monarch/"), "\(ping.stdout)")
        #expect(ping.stdout.contains("monarch \(MonarchRelease.version), up "), "\(ping.stdout)")

        // A second cluster in the same folder is refused before it touches the first one's sockets.
        let second = try await Self.monarch(["up"], in: folder.path, environment: environment)
        #expect(second.status == 1)
        #expect(second.stderr.contains("already running here (pid \(up.pid))"), "\(second.stderr)")
        let again = try await Self.monarch(["get", "hello.txt"], in: folder.path, environment: environment)
        #expect(again.status == 0, "the first cluster still answers: \(again.stderr)")

        // Nothing was written to the folder served.
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder.path)) == ["hello.txt", ".env"])
        let lines = up.standardOutput.text.split(separator: "\n")
        #expect(lines.last?.contains("monarch: ready") == true, "\(up.standardOutput.text)")
        #expect(up.standardOutput.text.contains("configuration: the embedded default configuration"))

        #expect(try await Self.interrupt(up) == 0, "\(up.standardOutput.text)")
        #expect(!up.standardOutput.text.contains("left open"), "\(up.standardOutput.text)")
        // The runtime folder keeps no socket and no lock.
        let folders = try FileManager.default.contentsOfDirectory(atPath: runtime.path + "/monarch")
        #expect(folders.count == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: runtime.path + "/monarch/" + folders[0]).isEmpty)
    }

    @Test("monarch.yml in the working directory is the configuration of every command given no --config")
    func configurationInTheWorkingDirectory() async throws {
        try await ClusterGate.inTurn { try await configurationInTheWorkingDirectoryBody() }
    }

    private func configurationInTheWorkingDirectoryBody() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try folder.write("files/a.txt", "from ./monarch.yml\n")
        try folder.write("monarch.yml", """
            listen: {clients: unix:run/client.sock, workers: unix:run/workers.sock}
            domains: {static: [bundle]}
            routes: [{match: "...", domain: static}]
            workers: {bundle: {root: files}}

            """)
        let up = try Self.start(Executables.monarch, ["up"], in: folder.path)
        defer { _ = up.signal(SIGKILL) }
        try await Self.waitFor("ready", from: up)
        #expect(up.standardOutput.text.contains(folder.path + "/run/client.sock"), "\(up.standardOutput.text)")
        // Standard error is read on its own: its lines may reach the test after the ready line.
        try await eventually("the configuration's log line") {
            up.standardError.text.contains("configuration: " + folder.path + "/monarch.yml")
        }

        let get = try await Self.monarch(["get", "a.txt"], in: folder.path)
        #expect(get.status == 0, "\(get.stderr)")
        #expect(get.stdout == "from ./monarch.yml\n")
        #expect(try await Self.interrupt(up) == 0)
    }

    @Test("With nothing running, the commands say what to do: monarch get and monarch ping exit 2 and name where they looked")
    func guidanceWhereNothingRuns() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let get = try await Self.monarch(["get", "hello.txt"], in: folder.path)
        #expect(get.status == 2)
        #expect(get.stderr.contains("the address is from the embedded default configuration"), "\(get.stderr)")
        #expect(get.stderr.contains("monarch up"), "\(get.stderr)")
        let ping = try await Self.monarch(["ping"], in: folder.path)
        #expect(ping.status == 2)
        #expect(ping.stderr.contains("monarch ping:"), "\(ping.stderr)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder.path)).isEmpty, "nothing was written")
    }

    @Test("monarch get --json: every error is one JSON object on standard output and nothing on standard error")
    func jsonErrorsUseOneStream() async throws {
        try await TestCluster.with { cluster in
            let address = "\(cluster.clientAddress)"
            let folder = cluster.folder.path
            let missing = try await Self.monarch(["get", "docs/missing.txt", "--json", "--address", address], in: folder)
            #expect(missing.status == 1)
            #expect(missing.stderr.isEmpty, "\(missing.stderr)")
            #expect(missing.stdout.hasPrefix(#"{"error":{"#), "\(missing.stdout)")

            let unreachable = try await Self.monarch(["get", "x", "--json", "--address", "unix:/nonexistent/x.sock"], in: folder)
            #expect(unreachable.status == 2)
            #expect(unreachable.stderr.isEmpty, "\(unreachable.stderr)")
            #expect(unreachable.stdout.contains(#""code":"cannotConnect""#), "\(unreachable.stdout)")

            let badDeadline = try await Self.monarch(["get", "x", "--json", "--deadline", "soon", "--address", address], in: folder)
            #expect(badDeadline.status == 64)
            #expect(badDeadline.stderr.isEmpty, "\(badDeadline.stderr)")
            #expect(badDeadline.stdout.contains(#""code":"invalidArguments""#), "\(badDeadline.stdout)")

            // Without --json the error is on standard error alone.
            let plain = try await Self.monarch(["get", "docs/missing.txt", "--address", address], in: folder)
            #expect(plain.status == 1)
            #expect(plain.stdout.isEmpty)
            #expect(plain.stderr.contains("exhausted"), "\(plain.stderr)")
        }
    }

    @Test("The embedded default serves HTTP on 127.0.0.1:8080 unless MONARCH_HTTP moves it (off: none); monarch check shows where")
    func embeddedDefaultListensForHTTP() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let runtime = ["XDG_RUNTIME_DIR": folder.path]
        let text = try await Self.monarch(["check", "--print"], in: folder.path, environment: runtime)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains(#"http: "tcp:127.0.0.1:8080""#), "\(text.stdout)")
        #expect(text.stdout.contains("upstream: http://127.0.0.1:8081/..."), "\(text.stdout)")
        let summary = try await Self.monarch(["check"], in: folder.path, environment: runtime)
        #expect(summary.stdout.contains("http: tcp:127.0.0.1:8080"), "\(summary.stdout)")
        let moved = try await Self.monarch(["check"], in: folder.path, environment: ["MONARCH_HTTP": "tcp:127.0.0.1:9999"])
        #expect(moved.status == 0 && moved.stdout.contains("http: tcp:127.0.0.1:9999"), "\(moved)")
        let off = try await Self.monarch(["check"], in: folder.path, environment: ["MONARCH_HTTP": "off"])
        #expect(off.status == 0 && off.stdout.contains("http: none"), "\(off)")
        let wrong = try await Self.monarch(["check"], in: folder.path, environment: ["MONARCH_HTTP": "tcp:0.0.0.0:8080"])
        #expect(wrong.status == 78)
        #expect(wrong.stderr.contains("MONARCH_HTTP: "), "\(wrong.stderr)")
    }

    @Test("monarch up on the embedded default whose HTTP port is taken stops before any worker starts, naming the port and how to move it")
    func embeddedDefaultOnABusyPort() async throws {
        try await ClusterGate.inTurn { try await embeddedDefaultOnABusyPortBody() }
    }

    private func embeddedDefaultOnABusyPortBody() async throws {
        let folder = try TemporaryFolder()
        let runtime = try TemporaryFolder()
        defer {
            folder.remove()
            runtime.remove()
        }
        let held = try HeldPort()
        let environment = ["XDG_RUNTIME_DIR": runtime.path, "MONARCH_HTTP": "tcp:127.0.0.1:\(held.port)"]
        let up = try Self.start(Executables.monarch, ["up"], in: folder.path, merged: true, environment: environment)
        defer { _ = up.signal(SIGKILL) }
        guard let exit = try await up.waitForExit(timeout: .seconds(30)) else {
            Issue.record("monarch up still running on a busy port: \(up.standardOutput.text)")
            return
        }
        let output = up.standardOutput.text
        #expect(exit.status == 1, "\(output)")
        #expect(output.contains("port \(held.port) is already in use"), "\(output)")
        #expect(output.contains("listen.http") && output.contains("MONARCH_HTTP=tcp:127.0.0.1:PORT"), "\(output)")
        #expect(!output.contains("monarch: ready"), "\(output)")
        #expect(!output.contains("registered"), "no worker was started: \(output)")
    }

    @Test("A worker that cannot be started fails monarch up with no process and no loop handle left behind")
    func failedStartLeavesNothing() async throws {
        try await ClusterGate.inTurn { try await failedStartLeavesNothingBody() }
    }

    private func failedStartLeavesNothingBody() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try folder.write("hello.txt", "hi\n")
        // monarch and two of the three workers the embedded default runs; the network worker
        // exits at once (it is /bin/false).
        try FileManager.default.createDirectory(atPath: folder.path + "/bin", withIntermediateDirectories: true)
        for name in ["monarch", "monarch-bundle-worker", "monarch-cache-worker"] {
            try #require(link(Executables.directory + "/" + name, folder.path + "/bin/" + name) == 0, "hard link: errno \(errno)")
        }
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/bin/monarch-network-worker", withDestinationPath: "/bin/false")
        let up = try Self.start(
            folder.path + "/bin/monarch", ["up"], in: folder.path, merged: true, environment: ["MONARCH_HTTP": "tcp:127.0.0.1:0"])
        defer { _ = up.signal(SIGKILL) }
        guard let exit = try await up.waitForExit(timeout: .seconds(30)) else {
            Issue.record("monarch up still running: \(up.standardOutput.text)")
            return
        }
        let output = up.standardOutput.text
        #expect(exit.status == 1, "\(output)")
        #expect(output.contains("network worker"), "\(output)")
        #expect(!output.contains("left open"), "\(output)")
        try await eventually("no worker of that folder to be left running") {
            let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return !processes.contains { pid in
                guard Int32(pid) != nil, let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else {
                    return false
                }
                return String(decoding: cmdline.prefix { $0 != 0 }, as: UTF8.self).hasPrefix(folder.path + "/bin/")
                    && !processIsGone(Int32(pid)!)
            }
        }
    }
}
