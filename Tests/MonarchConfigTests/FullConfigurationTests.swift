import MonarchConfig
import MonarchWire
import Testing

@Suite struct FullConfigurationTests {
    /// A configuration with every section: several domains and routes, each worker kind, limits.
    static let designYAML = """
        listen:
          clients: [unix:run/monarch.sock, tcp:127.0.0.1:7400]
          workers: tcp:127.0.0.1:7401
        auth:
          token: ${MONARCH_TOKEN}        # required on TCP listeners that are not loopback
        domains:                         # the domain table: domain -> providers, in order
          api:    [cache, network]
          assets: [cache, bundle, network]
          static: [bundle]
        routes:                          # path patterns -> domain and per-route options
          - match: users/:id
            where: { id: "[0-9]+" }      # optional: each parameter must match the whole pattern
            domain: api
            upstream: http://127.0.0.1:8080/users/:id
            ttl: 60s
            timeout: 5s
            policy: cacheFirst             # cacheFirst | networkFirst | cacheThenRefresh | noCache
          - match: assets/...
            domain: assets
            upstream: http://127.0.0.1:8080/assets/...
          - match: docs/...
            domain: static
        workers:
          cache:   { count: 1, store: sqlite:.monarch/cache.db, memory: 64MB }
          bundle:  { count: 1, root: Bundle }      # request path docs/a.txt -> Bundle/docs/a.txt
          network: { count: 2, allow: [127.0.0.1:8080] }
        limits:
          timeout: 10s
          maxFrame: 1MiB
        """

    @Test func theDesignExampleParsesToTheExpectedValues() throws {
        let configuration = try Configuration.parse(
            yaml: Self.designYAML, baseDirectory: "/srv/monarch", fileName: "monarch.yml",
            environment: ["MONARCH_TOKEN": "s3cret"]
        )
        #expect(configuration.listen == .init(
            clients: [.unix(path: "/srv/monarch/run/monarch.sock"), .tcp(host: "127.0.0.1", port: 7400)],
            workers: .tcp(host: "127.0.0.1", port: 7401)
        ))
        #expect(configuration.token == "s3cret")
        #expect(configuration.domains == [
            .init(name: "api", providers: ["cache", "network"]),
            .init(name: "assets", providers: ["cache", "bundle", "network"]),
            .init(name: "static", providers: ["bundle"]),
        ])
        #expect(configuration.routes == [
            .init(match: "users/:id", constraints: ["id": "[0-9]+"], domain: "api",
                  upstream: "http://127.0.0.1:8080/users/:id", ttl: .seconds(60), timeout: .seconds(5),
                  policy: .cacheFirst),
            .init(match: "assets/...", domain: "assets", upstream: "http://127.0.0.1:8080/assets/..."),
            .init(match: "docs/...", domain: "static"),
        ])
        #expect(configuration.workers == [
            .init(kind: "cache", count: 1, settings: .cache(.init(store: "sqlite:/srv/monarch/.monarch/cache.db", memoryBytes: 64 << 20))),
            .init(kind: "bundle", count: 1, settings: .bundle(.init(root: "/srv/monarch/Bundle", latency: .zero))),
            .init(kind: "network", count: 2, settings: .network(.init(allow: ["127.0.0.1:8080"]))),
        ])
        #expect(configuration.limits.timeout == .seconds(10))
        #expect(configuration.limits.maxFrameBytes == 1 << 20)
        #expect(configuration.domain(named: "assets")?.providers.first == "cache")
        #expect(configuration.workerPool(kind: "network")?.count == 2)
        #expect(configuration.workerPool(kind: "redis") == nil)
    }

    @Test func domainsRoutesAndWorkersKeepFileOrder() throws {
        let configuration = try Configuration.parse(yaml: """
            listen: {clients: unix:c.sock, workers: unix:w.sock}
            domains: {zeta: [network], alpha: [bundle], mid: [cache, network]}
            routes:
              - {match: z/..., domain: zeta}
              - {match: a/..., domain: alpha}
              - {match: "...", domain: mid}
            workers:
              network: {}
              bundle: {root: /var/www}
              cache:
            """, baseDirectory: "/srv")
        #expect(configuration.domains.map(\.name) == ["zeta", "alpha", "mid"])
        #expect(configuration.routes.map(\.match) == ["z/...", "a/...", "..."])
        #expect(configuration.workers.map(\.kind) == ["network", "bundle", "cache"])
        #expect(configuration.workers.map(\.settings.kind) == ["network", "bundle", "cache"])
    }

    @Test func absentAndEmptyValuesTakeTheirDefaults() throws {
        let configuration = try Configuration.parse(yaml: """
            listen:
              clients: unix:/run/monarch/c.sock
              workers: unix:/run/monarch/w.sock
            auth:
            domains:
              api: [cache, network]
            routes:
              - match: users/:id
                domain: api
                upstream: ~
                where: {}
            workers:
              cache:
              network: {count: 0}
            limits: {}
            """, baseDirectory: "/srv")
        #expect(configuration.listen.clients == [.unix(path: "/run/monarch/c.sock")])
        #expect(configuration.token == nil)
        #expect(configuration.routes == [.init(match: "users/:id", domain: "api")])
        #expect(configuration.workers == [
            .init(kind: "cache", count: 1, settings: .cache(.init(store: nil, memoryBytes: nil))),
            .init(kind: "network", count: 0, settings: .network(.init(allow: []))),
        ])
        #expect(configuration.limits.timeout == Configuration.standardTimeout)
        #expect(configuration.limits.maxFrameBytes == Configuration.standardMaxFrameBytes)
    }

    @Test func everyWorkerSettingParses() throws {
        let configuration = try Configuration.parse(yaml: """
            listen: {clients: unix:c.sock, workers: unix:w.sock}
            domains: {static: [bundle], api: [cache, network]}
            workers:
              bundle: {root: B, latency: 20ms, maxFile: 1MB, dotfiles: true, logLevel: debug}
              cache: {store: sqlite:c.db, memory: 1MB, keepStale: 2h, logLevel: warning}
              network:
                allow: [127.0.0.1:8080]
                retries: 0
                connectTimeout: 1.5s
                timeout: 2m
                maxRedirects: 3
                maxResponse: 4MB
                maxHostConnections: 8
                capacity: 16
                logLevel: trace
            """, baseDirectory: "/srv")
        #expect(configuration.workers == [
            .init(
                kind: "bundle", count: 1,
                settings: .bundle(.init(root: "/srv/B", latency: .milliseconds(20), maxFileBytes: 1 << 20, serveDotfiles: true)),
                logLevel: "debug"),
            .init(
                kind: "cache", count: 1,
                settings: .cache(.init(store: "sqlite:/srv/c.db", memoryBytes: 1 << 20, keepStale: .seconds(7200))),
                logLevel: "warning"),
            .init(
                kind: "network", count: 1,
                settings: .network(.init(
                    allow: ["127.0.0.1:8080"], retries: 0, connectTimeout: .milliseconds(1500), timeout: .seconds(120),
                    maxRedirects: 3, maxResponseBytes: 4 << 20, maxHostConnections: 8, capacity: 16)),
                logLevel: "trace"),
        ])
    }

    @Test func unsetWorkerSettingsAreLeftToTheWorkers() throws {
        let configuration = try Configuration.parse(yaml: """
            listen: {clients: unix:c.sock, workers: unix:w.sock}
            domains: {static: [bundle]}
            workers:
              bundle: {root: B, dotfiles: false}
              cache: {}
              network: {}
            """, baseDirectory: "/srv")
        #expect(configuration.workers.map(\.settings) == [
            .bundle(.init(root: "/srv/B")), .cache(.init()), .network(.init()),
        ])
        #expect(configuration.workers.allSatisfy { $0.logLevel == nil })
    }

    @Test func knownKindsServeDomainsWithoutAWorkersEntry() throws {
        let configuration = try Configuration.parse(
            yaml: "listen: {clients: unix:c.sock, workers: unix:w.sock}\ndomains: {api: [cache, bundle, network]}\n",
            baseDirectory: "/srv"
        )
        #expect(configuration.workers.isEmpty)
        #expect(configuration.routes.isEmpty)
        #expect(configuration.domains == [.init(name: "api", providers: ["cache", "bundle", "network"])])
    }

    @Test func pathsAreResolvedLexicallyAgainstTheBaseDirectory() throws {
        let configuration = try Configuration.parse(yaml: """
            listen: {clients: [unix:../run//c.sock], workers: unix:./w.sock}
            domains: {static: [bundle]}
            workers:
              bundle: {root: ../shared/./Bundle/, latency: 150ms}
              cache: {store: sqlite:/var/lib/monarch/cache.db, memory: 512KB}
            """, baseDirectory: "/srv/app/conf")
        #expect(configuration.listen.clients == [.unix(path: "/srv/app/run/c.sock")])
        #expect(configuration.listen.workers == .unix(path: "/srv/app/conf/w.sock"))
        #expect(configuration.workers.map(\.settings) == [
            .bundle(.init(root: "/srv/app/shared/Bundle", latency: .milliseconds(150))),
            .cache(.init(store: "sqlite:/var/lib/monarch/cache.db", memoryBytes: 512 * 1024)),
        ])
    }

    @Test func tokensExpandEveryVariableAndAllowExposedListeners() throws {
        let configuration = try Configuration.parse(yaml: """
            listen: {clients: [tcp:0.0.0.0:7400, "tcp:[::]:7402"], workers: tcp:192.168.1.2:7401}
            auth: {token: "pre-${A}-${B_2}$-end", workerToken: "w-${A}"}
            domains: {static: [bundle]}
            """, baseDirectory: "/srv", environment: ["A": "one", "B_2": "two"])
        #expect(configuration.token == "pre-one-two$-end")
        #expect(configuration.workerToken == "w-one")
        #expect(configuration.listen.clients == [.tcp(host: "0.0.0.0", port: 7400), .tcp(host: "::", port: 7402)])
    }

    @Test func loopbackListenersNeedNoToken() throws {
        let configuration = try Configuration.parse(yaml: """
            listen: {clients: [tcp:127.0.0.2:7400, tcp:localhost:7402, "tcp:[::1]:7403"], workers: tcp:127.0.0.1:7401}
            domains: {static: [bundle]}
            """, baseDirectory: "/srv")
        #expect(configuration.token == nil)
        #expect(configuration.listen.clients.count == 3)
    }

    @Test(arguments: [
        (SocketAddress.unix(path: "/run/m.sock"), true),
        (.tcp(host: "127.0.0.1", port: 1), true),
        (.tcp(host: "127.255.0.9", port: 1), true),
        (.tcp(host: "localhost", port: 1), true),
        (.tcp(host: "::1", port: 1), true),
        (.tcp(host: "0.0.0.0", port: 1), false),
        (.tcp(host: "::", port: 1), false),
        (.tcp(host: "10.0.0.1", port: 1), false),
        (.tcp(host: "127.0.0.1.example.com", port: 1), false),
        (.tcp(host: "127.example", port: 1), false),
    ])
    func localAddresses(address: SocketAddress, isLocal: Bool) {
        #expect(Configuration.isLocal(address) == isLocal)
    }

    @Test func theLimitsAcceptTheirLargestValue() throws {
        let configuration = try Configuration.parse(
            yaml: validHead + "limits: {timeout: 2m, maxFrame: 256MiB}\n", baseDirectory: "/srv"
        )
        #expect(configuration.limits.timeout == .seconds(120))
        #expect(configuration.limits.maxFrameBytes == Configuration.maxFrameBytesLimit)
    }

    @Test("Every limits key sets its bound; absent ones keep the standard values")
    func everyLimitKeyParses() throws {
        let configuration = try Configuration.parse(yaml: validHead + """
            limits:
              timeout: 5s
              maxFrame: 1MB
              helloFrame: 4KB
              helloTimeout: 2s
              handshakes: 3
              clients: 4
              workers: 5
              idleTimeout: 6s
              inFlightPerClient: 7
              inFlight: 8
              clientQueue: 2MB
              pathBytes: 100
              pathComponents: 9
              headers: 10
              headerBytes: 200
              queryItems: 11
              queryBytes: 300
              backgroundTasks: 12
              invalidations: 13
              invalidateBytes: 400
              watchQueue: 128KB
              watchQueueTotal: 1MB
              routeCache: 0
              workerStarts: 14
              hotTier: 0
              hotTierEntry: 2KB

            """, baseDirectory: "/srv")
        let limits = configuration.limits
        #expect(limits.timeout == .seconds(5))
        #expect(limits.maxFrameBytes == 1 << 20)
        #expect(limits.helloFrameBytes == 4 << 10)
        #expect(limits.helloTimeout == .seconds(2))
        #expect([limits.handshakes, limits.clients, limits.workers] == [3, 4, 5])
        #expect(limits.idleTimeout == .seconds(6))
        #expect([limits.inFlightPerClient, limits.inFlight] == [7, 8])
        #expect(limits.clientQueueBytes == 2 << 20)
        #expect([limits.pathBytes, limits.pathComponents, limits.headers, limits.headerBytes] == [100, 9, 10, 200])
        #expect([limits.queryItems, limits.queryBytes, limits.backgroundTasks] == [11, 300, 12])
        #expect([limits.invalidations, limits.invalidateBytes] == [13, 400])
        #expect([limits.watchQueueBytes, limits.watchQueueTotalBytes] == [128 << 10, 1 << 20])
        #expect(limits.routeCache == 0)
        #expect(limits.workerStarts == 14)
        #expect(limits.hotTierBytes == 0 && limits.hotTierEntryBytes == 2 << 10)
        #expect(Configuration.Limits().hotTierBytes == 64 << 20 && Configuration.Limits().hotTierEntryBytes == 1 << 20)
        #expect(try Configuration.parse(yaml: validHead, baseDirectory: "/srv").limits == Configuration.Limits())
        // A frame limit above the standard queue raises the queue with it, so any one answer fits.
        let big = try Configuration.parse(yaml: validHead + "limits: {maxFrame: 128MB}\n", baseDirectory: "/srv")
        #expect(big.limits.clientQueueBytes == 128 << 20)
    }

    @Test func everyPolicyNameParses() throws {
        for policy in CachePolicy.allCases {
            let configuration = try Configuration.parse(
                yaml: validHead + "routes: [{match: a, domain: static, policy: \(policy.rawValue)}]\n", baseDirectory: "/srv"
            )
            #expect(configuration.routes.first?.policy == policy)
        }
    }
}
