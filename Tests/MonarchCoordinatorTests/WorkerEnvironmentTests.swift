import MonarchConfig
@testable import MonarchCoordinator
import MonarchWire
import Testing

@Suite struct WorkerEnvironmentTests {
    @Test("No worker gets a role's secret, under any name; only a Redis cache worker gets its password")
    func secretsStayHome() {
        let configuration = Configuration(
            listen: .init(clients: [.unix(path: "/tmp/c.sock")], workers: .unix(path: "/tmp/w.sock")),
            token: "client-secret", adminToken: "admin-secret", workerToken: "worker-secret", metricsToken: "metrics-secret",
            domains: [.init(name: "api", providers: ["cache", "network"])],
            workers: [
                .init(kind: "cache", count: 1, settings: .cache(.init(store: "redis://127.0.0.1:6379/0", password: "redis-secret"))),
                .init(kind: "network", count: 1, settings: .network(.init(allow: []))),
            ])
        let base = [
            "PATH": "/usr/bin", "MONARCH_TOKEN": "client-secret", "MONARCH_ADMIN_TOKEN": "admin-secret",
            "MY_RENAMED_SECRET": "worker-secret", "REDIS_PASSWORD": "redis-secret", "MONARCH_REDIS_PASSWORD": "old",
        ]
        let environments = WorkerEnvironment(configuration: configuration, base: base)
        #expect(environments.environment(for: "network") == ["PATH": "/usr/bin"])
        #expect(environments.environment(for: "bundle") == ["PATH": "/usr/bin"])
        #expect(environments.environment(for: "cache") == ["PATH": "/usr/bin", "MONARCH_REDIS_PASSWORD": "redis-secret"])
    }
}
