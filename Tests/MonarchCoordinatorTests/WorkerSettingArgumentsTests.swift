import MonarchConfig
@testable import MonarchCoordinator
import MonarchWire
import Testing

/// The configuration's worker settings become the flags of each worker executable.
@Suite struct WorkerSettingArgumentsTests {
    @Test("every bundle setting becomes its flag; unset ones are left out")
    func bundle() {
        #expect(WorkerLaunch.settingArguments(.bundle(.init(root: "/b"))) == ["--root", "/b"])
        #expect(
            WorkerLaunch.settingArguments(.bundle(.init(
                root: "/b", latency: .milliseconds(250), maxFileBytes: 10, serveDotfiles: true)))
                == ["--root", "/b", "--latency-ms", "250", "--max-file-bytes", "10", "--serve-dotfiles"])
    }

    @Test("every cache setting becomes its flag, keepStale in seconds")
    func cache() {
        #expect(
            WorkerLaunch.settingArguments(.cache(.init(store: "sqlite:/c.db", memoryBytes: 4096, keepStale: .seconds(3600))))
                == ["--store", "sqlite:/c.db", "--memory-bytes", "4096", "--keep-stale-seconds", "3600"])
        #expect(
            WorkerLaunch.settingArguments(.cache(.init(keepStale: .zero)))
                == ["--memory-only", "--keep-stale-seconds", "0"])
    }

    @Test("a Redis store is one database every worker shares; its password is never an argument")
    func redisCache() {
        let redis = Configuration.WorkerSettings.cache(.init(
            store: "redis://cache:6379/2", password: "secret", storeTimeout: .milliseconds(1500), storeMaxPending: 64))
        let expected = ["--store", "redis://cache:6379/2", "--store-timeout-ms", "1500", "--store-max-pending", "64"]
        #expect(WorkerLaunch.settingArguments(redis, ordinal: 1) == expected)
        #expect(WorkerLaunch.settingArguments(redis, ordinal: 3) == expected)
        #expect(!WorkerLaunch.settingArguments(redis).contains("secret"))
    }

    @Test("every network setting becomes its flag, durations in milliseconds")
    func network() {
        #expect(WorkerLaunch.settingArguments(.network(.init())) == [])
        #expect(
            WorkerLaunch.settingArguments(.network(.init(
                allow: ["127.0.0.1:8080", "[::1]:8080"], retries: 0, connectTimeout: .milliseconds(1500),
                timeout: .seconds(120), maxRedirects: 3, maxResponseBytes: 4096, maxHostConnections: 8, capacity: 16)))
                == [
                    "--allow", "127.0.0.1:8080", "--allow", "[::1]:8080", "--retries", "0", "--connect-timeout-ms", "1500",
                    "--timeout-ms", "120000", "--max-redirects", "3", "--max-response-bytes", "4096",
                    "--max-host-connections", "8", "--capacity", "16",
                ])
    }

    @Test("a pool's logLevel replaces the level monarch up runs at, once on the command line")
    func logLevel() {
        let coordinator = SocketAddress.unix(path: "/run/w.sock")
        let quiet = Configuration.WorkerPool(
            kind: "network", count: 1, settings: .network(.init(retries: 1)), logLevel: "error")
        let launch = WorkerLaunch.launch(
            for: quiet, ordinal: 2, coordinator: coordinator, executableDirectory: "/bin", logLevel: "debug")
        #expect(launch.executable == "/bin/monarch-network-worker")
        #expect(launch.arguments == [
            "--coordinator", "unix:/run/w.sock", "--name", "network-2", "--log-level", "error", "--retries", "1",
        ])
        let inherited = WorkerLaunch.launch(
            for: .init(kind: "bundle", count: 1, settings: .bundle(.init(root: "/b"))), ordinal: 1,
            coordinator: coordinator, executableDirectory: "/bin", logLevel: "debug")
        #expect(inherited.arguments.filter { $0 == "--log-level" }.count == 1)
        #expect(inherited.arguments.firstIndex(of: "debug") == inherited.arguments.firstIndex(of: "--log-level")! + 1)
    }

    @Test("a parsed configuration's settings reach the arguments")
    func fromConfiguration() throws {
        let configuration = try Configuration.parse(yaml: """
            listen: {clients: unix:c.sock, workers: unix:w.sock}
            domains: {static: [bundle]}
            workers:
              bundle: {root: B, maxFile: 1KB, dotfiles: true}
              cache: {keepStale: 10m}
              network: {connectTimeout: 2s, maxResponse: 1MB}
            """, baseDirectory: "/srv")
        #expect(configuration.workers.map { WorkerLaunch.settingArguments($0.settings) } == [
            ["--root", "/srv/B", "--max-file-bytes", "1024", "--serve-dotfiles"],
            ["--memory-only", "--keep-stale-seconds", "600"],
            ["--connect-timeout-ms", "2000", "--max-response-bytes", "1048576"],
        ])
    }
}
