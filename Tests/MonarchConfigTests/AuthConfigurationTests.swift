import MonarchConfig
import Testing

@Suite struct AuthConfigurationTests {
    @Test("auth takes a secret per role, each expanded from the environment; reachable doors with their role's secret parse")
    func secretPerRole() throws {
        let yaml = """
            listen: {clients: [unix:c.sock, tcp:0.0.0.0:7400], workers: tcp:0.0.0.0:7401}
            domains: {static: [bundle]}
            auth:
              token: ${CLIENTS}
              adminToken: ${ADMINS}
              workerToken: ${WORKERS}
              metricsToken: ${SCRAPERS}
            metrics: tcp:0.0.0.0:9464
            limits: {handshakesPerPeer: 4, clientsPerPeer: 8, adminClients: 2, invalidationsPerSecond: 5}
            """
        let configuration = try Configuration.parse(
            yaml: yaml, baseDirectory: "/srv/monarch",
            environment: ["CLIENTS": "c-secret", "ADMINS": "a-secret", "WORKERS": "w-secret", "SCRAPERS": "m-secret"])
        #expect(configuration.token == "c-secret")
        #expect(configuration.adminToken == "a-secret")
        #expect(configuration.workerToken == "w-secret")
        #expect(configuration.metricsToken == "m-secret")
        #expect(configuration.limits.handshakesPerPeer == 4)
        #expect(configuration.limits.clientsPerPeer == 8)
        #expect(configuration.limits.adminClients == 2)
        #expect(configuration.limits.invalidationsPerSecond == 5)
    }

    @Test("Without limits, the admission bounds keep their documented defaults")
    func defaults() {
        let limits = Configuration.Limits()
        #expect(limits.handshakes == 128 && limits.handshakesPerPeer == 32)
        #expect(limits.clients == 1024 && limits.clientsPerPeer == 512 && limits.adminClients == 16)
        #expect(limits.invalidationsPerSecond == 100)
    }
}
