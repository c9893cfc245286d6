import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MonarchWire
import Testing

/// `monarch check`, and what every command does with a configuration that cannot be used:
/// the error alone on standard error, no usage text, exit 78 (EX_CONFIG).
@Suite("Configuration commands")
struct ConfigurationCommandTests {
    static let valid = """
        listen: {clients: unix:run/c.sock, workers: unix:run/w.sock}
        domains: {static: [bundle]}
        routes: [{match: "...", domain: static}]
        workers: {bundle: {root: files}}

        """

    @Test("monarch check: a valid file is summarised and exits 0, without starting anything")
    func checkAcceptsAValidFile() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try folder.write("files/a.txt", "a")
        try folder.write("monarch.yml", Self.valid)
        let check = try await FirstMinutesTests.monarch(["check"], in: folder.path)
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains(folder.path + "/monarch.yml: OK"), "\(check.stdout)")
        #expect(check.stdout.contains("clients: unix:\(folder.path)/run/c.sock"), "\(check.stdout)")
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/run"), "nothing was started")
    }

    @Test("monarch check: an unknown key, a missing bundle folder and a bad route pattern each exit 78 with the problem alone")
    func checkRefusesWhatWouldNotRun() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let cases: [(yaml: String, expected: String)] = [
            (Self.valid.replacingOccurrences(of: "routes:", with: "rutes:"), "rutes"),
            (Self.valid, "the bundle folder \(folder.path)/files does not exist"),
            (Self.valid.replacingOccurrences(of: "match: \"...\"", with: "match: \"a/.../b\""), "routes[0].match"),
        ]
        for (yaml, expected) in cases {
            try folder.write("monarch.yml", yaml)
            let check = try await FirstMinutesTests.monarch(["check"], in: folder.path)
            #expect(check.status == 78, "\(yaml)\n\(check.stderr)")
            #expect(check.stderr.contains(expected), "\(check.stderr)")
            #expect(!check.stderr.contains("Usage:"), "\(check.stderr)")
        }
    }

    @Test("monarch check: routes with host and httpBody pass; a host that is no DNS name, or an httpBody over the frame, exits 78 at its line")
    func checkJudgesHostsAndBodyLimits() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try folder.write("files/a.txt", "a")
        func withRoute(_ keys: String) -> String {
            Self.valid.replacingOccurrences(of: "routes: [{match: \"...\", domain: static}]", with: """
                routes:
                  - {match: "...", domain: static}
                  - {match: "...", domain: static, \(keys)}
                """)
        }
        try folder.write("monarch.yml", withRoute("host: \"*.example.com\", httpBody: 4MB"))
        let valid = try await FirstMinutesTests.monarch(["check"], in: folder.path)
        #expect(valid.status == 0, "\(valid.stderr)")
        let cases: [(keys: String, expected: String)] = [
            ("host: Example.com", "monarch.yml:5: routes[1].host: host \"Example.com\" has uppercase letters"),
            ("host: \"example.com:8080\"", "monarch.yml:5: routes[1].host: host \"example.com:8080\" has a port"),
            ("httpBody: 16MB", "monarch.yml:5: routes[1].httpBody: is 16777216 bytes, over the 12533760"),
        ]
        for (keys, expected) in cases {
            try folder.write("monarch.yml", withRoute(keys))
            let check = try await FirstMinutesTests.monarch(["check"], in: folder.path)
            #expect(check.status == 78, "\(keys)\n\(check.stderr)")
            #expect(check.stderr.contains(expected), "\(check.stderr)")
        }
    }

    @Test("Every command given a configuration that does not load exits 78 with the error alone")
    func everyCommandExits78OnABadConfiguration() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try folder.write("bad.yml", "listen: {clients: [], workers: unix:w.sock}\nnonsense: 1\n")
        for command in [["up"], ["get", "a.txt"], ["status"], ["ping"], ["invalidate", "a.txt"], ["watch", "a.txt"], ["scale", "bundle=1"]] {
            let run = try await FirstMinutesTests.monarch(command + ["--config", folder.path + "/bad.yml"], in: folder.path)
            #expect(run.status == 78, "\(command): \(run.stderr)")
            #expect(run.stderr.contains("bad.yml"), "\(command): \(run.stderr)")
            #expect(!run.stderr.contains("Usage:"), "\(command): \(run.stderr)")
        }
        let json = try await FirstMinutesTests.monarch(["get", "a.txt", "--json", "--config", folder.path + "/bad.yml"], in: folder.path)
        #expect(json.status == 78)
        #expect(json.stderr.isEmpty, "\(json.stderr)")
        #expect(json.stdout.contains(#""code":"invalidConfiguration""#), "\(json.stdout)")
    }

    @Test("monarch check --print shows the embedded default as it applies in this folder")
    func checkPrintsTheEmbeddedDefault() async throws {
        let folder = try TemporaryFolder()
        let runtime = try TemporaryFolder()
        defer {
            folder.remove()
            runtime.remove()
        }
        let check = try await FirstMinutesTests.monarch(
            ["check", "--print"], in: folder.path, environment: ["XDG_RUNTIME_DIR": runtime.path])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("unix:\(runtime.path)/monarch/"), "\(check.stdout)")
        #expect(check.stdout.contains("root: ."), "\(check.stdout)")
    }

    @Test("On the embedded default, commands refuse a runtime folder other users may enter (exit 78), before connecting")
    func anOpenRuntimeFolderIsNotTrusted() async throws {
        let folder = try TemporaryFolder()
        let runtime = try TemporaryFolder()
        defer {
            folder.remove()
            runtime.remove()
        }
        try FileManager.default.createDirectory(atPath: runtime.path + "/monarch", withIntermediateDirectories: true)
        chmod(runtime.path + "/monarch", 0o777)
        for command in [["get", "a.txt"], ["ping"]] {
            let run = try await FirstMinutesTests.monarch(command, in: folder.path, environment: ["XDG_RUNTIME_DIR": runtime.path])
            #expect(run.status == 78, "\(command): \(run.stderr)")
            #expect(run.stderr.contains("may be entered by other users"), "\(command): \(run.stderr)")
        }
    }

    @Test("monarch get, invalidate and watch refuse a URL naming a host, and say which path to give")
    func aURLWithAHostIsRefused() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        for command in [["get"], ["invalidate"], ["watch"]] {
            let run = try await FirstMinutesTests.monarch(
                command + ["http://example.com/docs/x.txt", "--address", "unix:/nonexistent.sock"], in: folder.path)
            #expect(run.status == 64, "\(command): \(run.stderr)")
            #expect(run.stderr.contains("the host example.com in it would not be used"), "\(command): \(run.stderr)")
            #expect(run.stderr.contains("\"docs/x.txt\""), "\(command): \(run.stderr)")
        }
    }
}

@Suite("Upstream statuses in the CLI", .serialized)
struct UpstreamStatusCommandTests {
    @Test("monarch get of a path the upstream answers 404 exits 1 and names the URL and the status")
    func anUpstream404IsNamed() async throws {
        try await withTaggedOrigin { cluster, _ in
            let run = try await FirstMinutesTests.monarch(
                ["get", "api/status/404", "--address", "\(cluster.clientAddress)"], in: cluster.folder.path)
            #expect(run.status == 1)
            #expect(run.stderr.contains("/status/404 answered 404"), "\(run.stderr)")
        }
    }
}
