import Foundation
import MonarchConfig
import Testing

@Suite struct RuntimeDirectoryTests {
    @Test func eachWorkingDirectoryHasAFolderOfItsOwnUnderTheRuntimeRoot() {
        let environment = ["XDG_RUNTIME_DIR": "/run/user/1000"]
        let a = RuntimeDirectory.path(forWorkingDirectory: "/srv/a", environment: environment)
        let b = RuntimeDirectory.path(forWorkingDirectory: "/srv/b", environment: environment)
        #expect(a.hasPrefix("/run/user/1000/monarch/"))
        #expect(a != b)
        #expect(a == RuntimeDirectory.path(forWorkingDirectory: "/srv/a", environment: environment))
        #expect(RuntimeDirectory.identifier(of: "/srv/a").count == 12)
    }

    @Test func withoutAnAbsoluteXDGRuntimeDirTheRootIsInTmpPerUser() {
        #expect(RuntimeDirectory.root(environment: [:]) == "/tmp/monarch-\(getuid())")
        #expect(RuntimeDirectory.root(environment: ["XDG_RUNTIME_DIR": "relative"]) == "/tmp/monarch-\(getuid())")
    }

    @Test func prepareMakesPrivateFoldersAndRefusesOnesOthersMayEnter() throws {
        let base = NSTemporaryDirectory() + "monarch-runtime-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: base) }
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let folder = base + "/monarch/abc"
        try RuntimeDirectory.prepare(folder)
        let mode = try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        try RuntimeDirectory.prepare(folder)  // again: fine

        chmod(base + "/monarch", 0o777)
        #expect(throws: ConfigError.self) { try RuntimeDirectory.prepare(folder) }
        chmod(base + "/monarch", 0o700)

        let link = base + "/link/abc"
        try FileManager.default.createSymbolicLink(atPath: base + "/link", withDestinationPath: base + "/monarch")
        #expect(throws: ConfigError.self) { try RuntimeDirectory.prepare(link) }
    }
}
