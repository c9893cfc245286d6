import MonarchConfig
import Testing

@testable import MonarchCoordinator

@Suite struct ReloadPlanTests {
    static let running = Configuration(
        listen: .init(clients: [.unix(path: "/r/c.sock")], workers: .unix(path: "/r/w.sock")),
        token: nil,
        domains: [.init(name: "static", providers: ["bundle"]), .init(name: "api", providers: ["cache", "network"])],
        routes: [.init(match: "...", domain: "static")],
        workers: [
            .init(kind: "bundle", count: 1, settings: .bundle(.init(root: "/srv", latency: .zero))),
            .init(kind: "cache", count: 1, settings: .cache(.init(store: nil, memoryBytes: 8 << 20))),
        ])

    @Test func routesDomainsLivelimitsAndCountsAreApplied() throws {
        var file = Self.running
        file.routes.append(.init(match: "api/...", domain: "api", upstream: "http://127.0.0.1:8080/...", ttl: .seconds(5)))
        file.domains[0].providers = ["cache", "bundle"]
        file.workers[0].count = 3
        file.limits.inFlight = 5
        file.http.purgeFrom = [.unixSocket]
        let plan = try ReloadPlan(running: Self.running, file: file)
        #expect(plan.configuration.http.purgeFrom == [.unixSocket])
        #expect(plan.configuration.routes == file.routes)
        #expect(plan.configuration.domains == file.domains)
        #expect(plan.configuration.limits.inFlight == 5)
        #expect(plan.configuration.workers[0].count == 3)
        #expect(plan.scales == ["bundle": 3])
        #expect(plan.needsRestart.isEmpty)
    }

    @Test func whatOnlyARestartAppliesIsKeptAsItRunsAndNamed() throws {
        var file = Self.running
        file.listen.clients = [.unix(path: "/elsewhere.sock")]
        file.token = "secret"
        file.workers[1].settings = .cache(.init(store: nil, memoryBytes: 16 << 20))
        file.workers.append(.init(kind: "network", count: 1, settings: .network(.init(allow: ["127.0.0.1:8080"]))))
        file.limits.heartbeat = .seconds(5)
        file.limits.routeCache = 1
        let plan = try ReloadPlan(running: Self.running, file: file)
        #expect(plan.configuration.listen == Self.running.listen)
        #expect(plan.configuration.token == nil)
        #expect(plan.configuration.workers == Self.running.workers)
        #expect(plan.configuration.limits == Self.running.limits)
        #expect(plan.needsRestart == [
            "listen", "auth", "workers.cache (settings other than count)", "workers.network (a new pool)",
            "limits.routeCache", "limits.heartbeat",
        ])
    }

    @Test func aLongerLongestTimeoutCannotBeApplied() {
        var file = Self.running
        file.limits.timeout = .seconds(60)
        #expect(throws: ConfigError.self) { try ReloadPlan(running: Self.running, file: file) }
        var shorter = Self.running
        shorter.limits.timeout = .seconds(10)
        #expect((try? ReloadPlan(running: Self.running, file: shorter)) != nil)
    }

    @Test func aDomainNamingAKindWithNoPoolCannotBeApplied() {
        var file = Self.running
        file.domains.append(.init(name: "assets", providers: ["s3"]))
        #expect(throws: ConfigError.self) { try ReloadPlan(running: Self.running, file: file) }
    }
}
