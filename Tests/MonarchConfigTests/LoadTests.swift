import Foundation
import MonarchConfig
import MonarchWire
import Testing

@Suite struct LoadTests {
    @Test func relativePathsAreTakenFromTheFilesFolder() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/monarch.yml"
        try "listen: {clients: unix:c.sock, workers: unix:w.sock}\ndomains: {static: [bundle]}\nworkers: {bundle: {root: B}}\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let configuration = try Configuration.load(file: path, environment: [:])
        #expect(configuration.listen.clients == [.unix(path: directory + "/c.sock")])
        #expect(configuration.workers.first?.settings == .bundle(.init(root: directory + "/B", latency: .zero)))
    }

    @Test func errorsNameTheFileAsGiven() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/broken.yml"
        try (validHead + "routes:\n  - match: a\n    domain: static\n    ttl: soon\n")
            .write(toFile: path, atomically: true, encoding: .utf8)
        do {
            _ = try Configuration.load(file: path, environment: [:])
            Issue.record("loaded a broken file")
        } catch {
            #expect(error.file == path)
            #expect(error.line == 6)
            #expect(error.description == "\(path):6: routes[0].ttl: expected a duration such as 500ms, 5s or 2m, got \"soon\"")
        }
    }

    @Test func theEnvironmentIsPassedThrough() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/monarch.yml"
        try (validHead + "auth: {token: \"${MONARCH_TEST_TOKEN}\"}\n").write(toFile: path, atomically: true, encoding: .utf8)
        let configuration = try Configuration.load(file: path, environment: ["MONARCH_TEST_TOKEN": "t"])
        #expect(configuration.token == "t")
    }

    @Test func aMissingFileIsReported() {
        #expect(throws: ConfigError(file: "/nonexistent/monarch.yml", keyPath: "", problem: "no such file")) {
            try Configuration.load(file: "/nonexistent/monarch.yml")
        }
    }

    @Test func aDirectoryIsNotAFile() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(throws: ConfigError(file: directory, keyPath: "", problem: "is a directory, not a file")) {
            try Configuration.load(file: directory)
        }
    }

    @Test func textThatIsNotUTF8IsReported() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/latin1.yml"
        try Data([0x6C, 0x69, 0x73, 0x74, 0xE9, 0x0A]).write(to: URL(fileURLWithPath: path))
        #expect(throws: ConfigError(file: path, keyPath: "", problem: "the file is not UTF-8 text")) {
            try Configuration.load(file: path)
        }
    }
}

@Suite struct ConfigErrorDescriptionTests {
    @Test(arguments: [
        (ConfigError(file: "monarch.yml", line: 14, keyPath: "routes[2].ttl", problem: "bad"), "monarch.yml:14: routes[2].ttl: bad"),
        (ConfigError(file: "monarch.yml", keyPath: "", problem: "no such file"), "monarch.yml: no such file"),
        (ConfigError(line: 3, keyPath: "auth", problem: "bad"), "line 3: auth: bad"),
        (ConfigError(keyPath: "", problem: "bad"), "bad"),
    ])
    func readsLikeADiagnostic(error: ConfigError, description: String) {
        #expect(error.description == description)
    }
}
