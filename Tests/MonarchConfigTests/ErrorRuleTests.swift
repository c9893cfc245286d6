import MonarchConfig
import Testing

/// One broken rule: the text, and where and what the error must say.
struct ErrorCase: Sendable, CustomTestStringConvertible {
    let rule: String
    let yaml: String
    let keyPath: String
    let line: Int?
    /// Fragments the problem text must contain.
    let gist: [String]

    var testDescription: String { rule }

    init(_ rule: String, _ yaml: String, keyPath: String, line: Int?, _ gist: String...) {
        self.rule = rule
        self.yaml = yaml
        self.keyPath = keyPath
        self.line = line
        self.gist = gist
    }
}

@Suite struct ErrorRuleTests {
    static let documentCases: [ErrorCase] = [
        .init("the document is a mapping", "- listen\n- domains\n", keyPath: "", line: 1,
              "expected a mapping with the keys listen, auth, domains, routes, workers, metrics, http and limits", "got a list"),
        .init("the document is not empty", "# nothing here\n", keyPath: "", line: nil, "empty"),
        .init("YAML syntax errors carry their line", validHead + "routes: [\n  - a: b\n", keyPath: "", line: 4,
              "invalid YAML"),
        .init("duplicate keys are errors", validHead + "domains: {api: [cache]}\n", keyPath: "", line: 2,
              "\"domains\" appears more than once"),
        .init("unknown top-level keys name the expected ones", validHead + "rotues: []\n", keyPath: "rotues", line: 3,
              "unknown key \"rotues\"",
              "expected listen, auth, domains, routes, workers, metrics, http or limits", "did you mean \"routes\"?"),
        .init("listen is required", "domains: {static: [bundle]}\n", keyPath: "listen", line: 1, "missing"),
        .init("domains is required", "listen: {clients: unix:c.sock, workers: unix:w.sock}\n", keyPath: "domains",
              line: 1, "missing"),
    ]

    static let listenCases: [ErrorCase] = [
        .init("listen is a mapping", "listen: [unix:c.sock]\ndomains: {static: [bundle]}\n", keyPath: "listen",
              line: 1, "expected a mapping, got a list"),
        .init("listen has no unknown keys",
              "listen:\n  clients: unix:c.sock\n  workers: unix:w.sock\n  client: unix:d.sock\ndomains: {static: [bundle]}\n",
              keyPath: "listen.client", line: 4, "unknown key \"client\"", "expected clients, workers, group or http"),
        .init("listen.group is a group name",
              "listen:\n  clients: unix:c.sock\n  workers: unix:w.sock\n  group: 'a b'\ndomains: {static: [bundle]}\n",
              keyPath: "listen.group", line: 4, "is not a group name"),
        .init("listen.clients is required", "listen:\n  workers: unix:w.sock\ndomains: {static: [bundle]}\n",
              keyPath: "listen.clients", line: 2, "missing"),
        .init("listen.clients has at least one address",
              "listen:\n  clients: []\n  workers: unix:w.sock\ndomains: {static: [bundle]}\n",
              keyPath: "listen.clients", line: 2, "at least one address"),
        .init("listen.clients entries are addresses",
              "listen:\n  clients:\n    - unix:c.sock\n    - tcp:localhost\n  workers: unix:w.sock\ndomains: {static: [bundle]}\n",
              keyPath: "listen.clients[1]", line: 4, "invalid address \"tcp:localhost\": expected tcp:HOST:PORT"),
        .init("listen.clients as one string is an address",
              "listen:\n  clients: 7400\n  workers: unix:w.sock\ndomains: {static: [bundle]}\n",
              keyPath: "listen.clients", line: 2, "expected unix:PATH or tcp:HOST:PORT"),
        .init("listen.clients entries are strings",
              "listen:\n  clients: [[unix:c.sock]]\n  workers: unix:w.sock\ndomains: {static: [bundle]}\n",
              keyPath: "listen.clients[0]", line: 2, "expected an address such as unix:PATH or tcp:HOST:PORT, got a list"),
        .init("listen.workers is required", "listen:\n  clients: unix:c.sock\ndomains: {static: [bundle]}\n",
              keyPath: "listen.workers", line: 2, "missing"),
        .init("listen.workers is one address",
              "listen:\n  clients: unix:c.sock\n  workers: [unix:w.sock]\ndomains: {static: [bundle]}\n",
              keyPath: "listen.workers", line: 3, "expected an address", "got a list"),
        .init("listen.workers port is a number",
              "listen:\n  clients: unix:c.sock\n  workers: tcp:127.0.0.1:http\ndomains: {static: [bundle]}\n",
              keyPath: "listen.workers", line: 3, "the port \"http\" is not a number"),
        .init("listeners are distinct",
              "listen:\n  clients: [unix:x.sock, unix:./x.sock]\n  workers: unix:w.sock\ndomains: {static: [bundle]}\n",
              keyPath: "listen.clients[1]", line: 2, "unix:/srv/monarch/x.sock is already used by listen.clients[0]"),
        .init("a client listener beyond loopback needs a token",
              "listen:\n  clients: [unix:c.sock, tcp:0.0.0.0:7400]\n  workers: unix:w.sock\ndomains: {static: [bundle]}\n",
              keyPath: "listen.clients[1]", line: 2, "tcp:0.0.0.0:7400 can be reached from other machines",
              "auth.token is required"),
        .init("a worker listener beyond loopback needs the workers' secret",
              "listen:\n  clients: unix:c.sock\n  workers: tcp:10.0.0.5:7401\ndomains: {static: [bundle]}\n",
              keyPath: "listen.workers", line: 3, "auth.workerToken is required"),
        .init("the clients' token is not the workers' secret",
              "listen:\n  clients: unix:c.sock\n  workers: tcp:10.0.0.5:7401\ndomains: {static: [bundle]}\nauth: {token: t}\n",
              keyPath: "listen.workers", line: 3, "auth.workerToken is required"),
        .init("metrics beyond loopback need the metrics (or admin) secret",
              validHead + "auth: {token: t}\nmetrics: tcp:10.0.0.5:9464\n",
              keyPath: "metrics", line: 4, "auth.metricsToken is required"),
        .init("an empty auth section is no token",
              "listen:\n  clients: tcp:[::]:7400\n  workers: unix:w.sock\ndomains: {static: [bundle]}\nauth:\n",
              keyPath: "listen.clients", line: 2, "auth.token is required"),
    ]

    static let authCases: [ErrorCase] = [
        .init("auth is a mapping", validHead + "auth: secret\n", keyPath: "auth", line: 3,
              "expected a mapping, got \"secret\""),
        .init("auth has no unknown keys", validHead + "auth:\n  tokn: secret\n", keyPath: "auth.tokn", line: 4,
              "unknown key \"tokn\"; expected token, adminToken, workerToken or metricsToken (did you mean \"token\"?)"),
        .init("each role has its own secret", validHead + "auth:\n  token: same\n  adminToken: same\n",
              keyPath: "auth.adminToken", line: 5, "auth.adminToken is the same secret as auth.token"),
        .init("an unset variable is named", validHead + "auth:\n  token: ${MONARCH_TOKEN}\n", keyPath: "auth.token",
              line: 4, "the environment variable MONARCH_TOKEN is not set"),
        .init("an unclosed ${ is an error", validHead + "auth:\n  token: ab${MONARCH_TOKEN\n", keyPath: "auth.token",
              line: 4, "without a closing"),
        .init("a variable has a valid name", validHead + "auth:\n  token: ${MONARCH TOKEN}\n", keyPath: "auth.token",
              line: 4, "does not name an environment variable"),
        .init("the token is not empty", validHead + "auth:\n  token: \"\"\n", keyPath: "auth.token", line: 4,
              "the token is empty"),
        .init("the token is a string", validHead + "auth:\n  token: [a, b]\n", keyPath: "auth.token", line: 4,
              "expected a secret string, such as ${MONARCH_TOKEN}, got a list"),
    ]

    static let domainCases: [ErrorCase] = [
        .init("domains is a mapping", "listen: {clients: unix:c.sock, workers: unix:w.sock}\ndomains: [bundle]\n",
              keyPath: "domains", line: 2, "expected a mapping of domain name to providers"),
        .init("domains has at least one domain", "listen: {clients: unix:c.sock, workers: unix:w.sock}\ndomains: {}\n",
              keyPath: "domains", line: 2, "at least one domain"),
        .init("domain names are lowercase names",
              "listen: {clients: unix:c.sock, workers: unix:w.sock}\ndomains:\n  static: [bundle]\n  Api: [cache]\n",
              keyPath: "domains.Api", line: 4, "\"Api\" is not a valid domain name"),
        .init("domain names start with a letter",
              "listen: {clients: unix:c.sock, workers: unix:w.sock}\ndomains:\n  1st: [bundle]\n",
              keyPath: "domains.1st", line: 3, "not a valid domain name"),
        .init("a domain's providers are a list",
              "listen: {clients: unix:c.sock, workers: unix:w.sock}\ndomains:\n  static: bundle\n",
              keyPath: "domains.static", line: 3, "expected a list of providers such as [cache, network], got \"bundle\""),
        .init("a domain has at least one provider",
              "listen: {clients: unix:c.sock, workers: unix:w.sock}\ndomains:\n  static: []\n",
              keyPath: "domains.static", line: 3, "at least one provider"),
        .init("provider kinds are known",
              "listen: {clients: unix:c.sock, workers: unix:w.sock}\ndomains:\n  static: [bundle, netwrok]\n",
              keyPath: "domains.static[1]", line: 3,
              "unknown provider kind \"netwrok\"; expected bundle, cache or network (did you mean \"network\"?)"),
        .init("provider kinds are names",
              "listen: {clients: unix:c.sock, workers: unix:w.sock}\ndomains:\n  static:\n    - Bundle\n",
              keyPath: "domains.static[0]", line: 4, "\"Bundle\" is not a valid provider name"),
        .init("a provider appears once per chain",
              "listen: {clients: unix:c.sock, workers: unix:w.sock}\ndomains:\n  static: [bundle, cache, bundle]\n",
              keyPath: "domains.static[2]", line: 3, "\"bundle\" appears twice in the chain of static"),
    ]

    static let routeCases: [ErrorCase] = [
        .init("routes is a list", validHead + "routes: {match: a, domain: static}\n", keyPath: "routes", line: 3,
              "expected a list of routes, got a mapping"),
        .init("a route is a mapping", validHead + "routes:\n  - users/:id\n", keyPath: "routes[0]", line: 4,
              "expected a route mapping with match and domain, got \"users/:id\""),
        .init("routes have no unknown keys",
              validHead + "routes:\n  - match: a\n    domain: static\n    polcy: noCache\n",
              keyPath: "routes[0].polcy", line: 6, "unknown key \"polcy\"", "(did you mean \"policy\"?)"),
        .init("a route needs match", validHead + "routes:\n  - domain: static\n", keyPath: "routes[0].match", line: 4,
              "missing; expected a path pattern"),
        .init("match is not empty", validHead + "routes:\n  - match: ''\n    domain: static\n",
              keyPath: "routes[0].match", line: 4, "got an empty string"),
        .init("a route needs domain", validHead + "routes:\n  - match: a\n", keyPath: "routes[0].domain", line: 4,
              "missing; expected one of the domains (static)"),
        .init("a route's domain is in domains",
              validHead + "routes:\n  - {match: a, domain: static}\n  - {match: b, domain: static}\n  - match: c\n    domain: statc\n",
              keyPath: "routes[2].domain", line: 7, "unknown domain \"statc\"; expected static (did you mean \"static\"?)"),
        .init("where is a mapping", validHead + "routes:\n  - match: users/:id\n    domain: static\n    where: '[0-9]+'\n",
              keyPath: "routes[0].where", line: 6, "expected a mapping of parameter name to regular expression"),
        .init("where patterns compile",
              validHead + "routes:\n  - match: users/:id\n    domain: static\n    where: { id: \"[0-9\" }\n",
              keyPath: "routes[0].where.id", line: 6, "\"[0-9\" is not a valid regular expression"),
        .init("where patterns are strings",
              validHead + "routes:\n  - match: users/:id\n    domain: static\n    where:\n      id: [a]\n",
              keyPath: "routes[0].where.id", line: 7, "expected a regular expression, got a list"),
        .init("upstream is a string", validHead + "routes:\n  - match: a\n    domain: static\n    upstream: {a: b}\n",
              keyPath: "routes[0].upstream", line: 6, "expected an upstream URL, got a mapping"),
        .init("ttl is a duration", validHead + "routes:\n  - match: a\n    domain: static\n    ttl: soon\n",
              keyPath: "routes[0].ttl", line: 6, "expected a duration such as 500ms, 5s or 2m, got \"soon\""),
        .init("ttl asks for a unit", validHead + "routes:\n  - match: a\n    domain: static\n    ttl: 60\n",
              keyPath: "routes[0].ttl", line: 6, "add a unit (60ms, 60s, 60m or 60h)"),
        .init("timeout is above zero", validHead + "routes:\n  - match: a\n    domain: static\n    timeout: 0ms\n",
              keyPath: "routes[0].timeout", line: 6, "must be longer than zero"),
        .init("timeout is a duration", validHead + "routes:\n  - match: a\n    domain: static\n    timeout: -5s\n",
              keyPath: "routes[0].timeout", line: 6, "expected a duration"),
        .init("policy is one of the four", validHead + "routes:\n  - match: a\n    domain: static\n    policy: cacheOnly\n",
              keyPath: "routes[0].policy", line: 6,
              "unknown cache policy \"cacheOnly\"; expected cacheFirst, networkFirst, cacheThenRefresh or noCache"),
    ]

    static let workerCases: [ErrorCase] = [
        .init("workers is a mapping", validHead + "workers: [bundle]\n", keyPath: "workers", line: 3,
              "expected a mapping of worker kind to settings, got a list"),
        .init("worker kinds are known", validHead + "workers:\n  bundle: {root: B}\n  cahce: {count: 1}\n",
              keyPath: "workers.cahce", line: 5,
              "unknown worker kind \"cahce\"; expected bundle, cache or network (did you mean \"cache\"?)"),
        .init("worker settings are a mapping", validHead + "workers:\n  bundle: 3\n", keyPath: "workers.bundle",
              line: 4, "expected a mapping of bundle worker settings, got \"3\""),
        .init("count is a whole number", validHead + "workers:\n  bundle: {count: two, root: B}\n",
              keyPath: "workers.bundle.count", line: 4, "expected a whole number of at least 0, got \"two\""),
        .init("count is not negative", validHead + "workers:\n  bundle:\n    count: -1\n    root: B\n",
              keyPath: "workers.bundle.count", line: 5, "expected a whole number of at least 0, got \"-1\""),
        .init("bundle needs root", validHead + "workers:\n  bundle: {count: 2}\n", keyPath: "workers.bundle.root",
              line: 4, "missing; expected the bundle folder"),
        .init("bundle latency is a duration", validHead + "workers:\n  bundle: {root: B, latency: fast}\n",
              keyPath: "workers.bundle.latency", line: 4, "expected a duration such as 500ms, 5s or 2m, got \"fast\""),
        .init("settings of another kind are unknown keys", validHead + "workers:\n  bundle: {root: B, allow: []}\n",
              keyPath: "workers.bundle.allow", line: 4, "unknown key \"allow\"; expected count, root, latency, maxFile, dotfiles or logLevel"),
        .init("cache store is sqlite:PATH or redis://", validHead + "workers:\n  cache: {store: memcached://cache:11211}\n",
              keyPath: "workers.cache.store", line: 4, "expected a store such as sqlite:.monarch/cache.db or redis://127.0.0.1:6379/0"),
        .init("rediss:// is refused, saying why", validHead + "workers:\n  cache: {store: 'rediss://cache:6379/0'}\n",
              keyPath: "workers.cache.store", line: 4, "rediss:// (TLS) is not supported: the hiredis Monarch builds on"),
        .init("no password in a Redis address", validHead + "workers:\n  cache: {store: 'redis://:pw@cache:6379/0'}\n",
              keyPath: "workers.cache.store", line: 4, "no password in the address (it would show in ps)"),
        .init("a Redis address has a port", validHead + "workers:\n  cache: {store: 'redis://cache:http/0'}\n",
              keyPath: "workers.cache.store", line: 4, "expected redis://HOST:PORT/DB"),
        .init("a Redis database is a number", validHead + "workers:\n  cache: {store: 'redis://cache:6379/x'}\n",
              keyPath: "workers.cache.store", line: 4, "expected a database number"),
        .init("password is for Redis", validHead + "workers:\n  cache: {store: 'sqlite:c.db', password: x}\n",
              keyPath: "workers.cache.password", line: 4, "password is for a Redis store"),
        .init("storeTimeout is for Redis", validHead + "workers:\n  cache: {storeTimeout: 1s}\n",
              keyPath: "workers.cache.storeTimeout", line: 4, "storeTimeout is for a Redis store"),
        .init("a password's variable is set", validHead + "workers:\n  cache: {store: 'redis://cache', password: '${MONARCH_UNSET_SECRET}'}\n",
              keyPath: "workers.cache.password", line: 4, "the environment variable MONARCH_UNSET_SECRET is not set"),
        .init("cache store has a path", validHead + "workers:\n  cache: {store: 'sqlite:'}\n",
              keyPath: "workers.cache.store", line: 4, "expected a store such as sqlite:"),
        .init("cache memory is a byte size", validHead + "workers:\n  cache:\n    memory: lots\n",
              keyPath: "workers.cache.memory", line: 5, "expected a byte size such as 4096, 512KB, 64MB or 1GB, got \"lots\""),
        .init("network allow is a list", validHead + "workers:\n  network: {allow: 127.0.0.1:8080}\n",
              keyPath: "workers.network.allow", line: 4, "expected a list of host:port entries"),
        .init("network allow entries are host:port",
              validHead + "workers:\n  network:\n    allow:\n      - 127.0.0.1:8080\n      - example.com\n",
              keyPath: "workers.network.allow[1]", line: 7, "expected host:port", "got \"example.com\""),
        .init("network allow ports are numbers", validHead + "workers:\n  network: {allow: ['example.com:http']}\n",
              keyPath: "workers.network.allow[0]", line: 4, "expected host:port"),
        .init("bundle maxFile is a byte size", validHead + "workers:\n  bundle: {root: B, maxFile: huge}\n",
              keyPath: "workers.bundle.maxFile", line: 4, "expected a byte size such as 4096, 512KB, 64MB or 1GB, got \"huge\""),
        .init("bundle dotfiles is true or false", validHead + "workers:\n  bundle: {root: B, dotfiles: sometimes}\n",
              keyPath: "workers.bundle.dotfiles", line: 4, "expected true or false, got \"sometimes\""),
        .init("bundle dotfiles is not a list", validHead + "workers:\n  bundle: {root: B, dotfiles: [yes]}\n",
              keyPath: "workers.bundle.dotfiles", line: 4, "expected true or false, got a list"),
        .init("bundle settings list every key of the kind", validHead + "workers:\n  bundle: {root: B, maxFiles: 1KB}\n",
              keyPath: "workers.bundle.maxFiles", line: 4,
              "unknown key \"maxFiles\"; expected count, root, latency, maxFile, dotfiles or logLevel",
              "(did you mean \"maxFile\"?)"),
        .init("cache keepStale is a duration", validHead + "workers:\n  cache: {keepStale: 86400}\n",
              keyPath: "workers.cache.keepStale", line: 4, "add a unit (86400ms, 86400s, 86400m or 86400h)"),
        .init("cache keepStale is whole seconds", validHead + "workers:\n  cache: {keepStale: 1500ms}\n",
              keyPath: "workers.cache.keepStale", line: 4, "must be a whole number of seconds, got \"1500ms\""),
        .init("network retries is not negative", validHead + "workers:\n  network: {retries: -1}\n",
              keyPath: "workers.network.retries", line: 4, "expected a whole number of at least 0, got \"-1\""),
        .init("network connectTimeout is a duration", validHead + "workers:\n  network: {connectTimeout: 5}\n",
              keyPath: "workers.network.connectTimeout", line: 4, "add a unit"),
        .init("network connectTimeout is above zero", validHead + "workers:\n  network: {connectTimeout: 0s}\n",
              keyPath: "workers.network.connectTimeout", line: 4, "must be longer than zero"),
        .init("network timeout is whole milliseconds", validHead + "workers:\n  network: {timeout: 1.5ms}\n",
              keyPath: "workers.network.timeout", line: 4, "must be a whole number of milliseconds, got \"1.5ms\""),
        .init("network maxRedirects is a whole number", validHead + "workers:\n  network: {maxRedirects: many}\n",
              keyPath: "workers.network.maxRedirects", line: 4, "expected a whole number of at least 0, got \"many\""),
        .init("network maxResponse is a byte size", validHead + "workers:\n  network: {maxResponse: 12 MBs}\n",
              keyPath: "workers.network.maxResponse", line: 4, "expected a byte size"),
        .init("network maxResponse is at least a byte", validHead + "workers:\n  network: {maxResponse: 0}\n",
              keyPath: "workers.network.maxResponse", line: 4, "must be at least 1 byte"),
        .init("network maxHostConnections is at least 1", validHead + "workers:\n  network: {maxHostConnections: 0}\n",
              keyPath: "workers.network.maxHostConnections", line: 4, "expected a whole number of at least 1, got \"0\""),
        .init("network capacity is at least 1", validHead + "workers:\n  network:\n    capacity: 0\n",
              keyPath: "workers.network.capacity", line: 5, "expected a whole number of at least 1, got \"0\""),
        .init("a setting of another kind names the kind's keys", validHead + "workers:\n  cache: {retries: 2}\n",
              keyPath: "workers.cache.retries", line: 4,
              "unknown key \"retries\"; expected count, store, memory, keepStale, password, storeTimeout, storeMaxPending, memoryGrace or logLevel"),
        .init("logLevel is a known level", validHead + "workers:\n  network: {logLevel: verbose}\n",
              keyPath: "workers.network.logLevel", line: 4,
              "unknown log level \"verbose\"; expected trace, debug, info, notice, warning, error or critical"),
        .init("logLevel misspellings get a suggestion", validHead + "workers:\n  bundle: {root: B, logLevel: debg}\n",
              keyPath: "workers.bundle.logLevel", line: 4, "unknown log level \"debg\"", "(did you mean \"debug\"?)"),
    ]

    static let limitCases: [ErrorCase] = [
        .init("limits is a mapping", validHead + "limits: 5\n", keyPath: "limits", line: 3,
              "expected a mapping, got \"5\""),
        .init("limits has no unknown keys", validHead + "limits:\n  maxframe: 1MB\n", keyPath: "limits.maxframe",
              line: 4, "unknown key \"maxframe\"; expected timeout, maxFrame, helloFrame", "(did you mean \"maxFrame\"?)"),
        .init("limits.timeout is above zero", validHead + "limits:\n  timeout: 0s\n", keyPath: "limits.timeout",
              line: 4, "must be longer than zero"),
        .init("limits.clientQueue holds at least one frame", validHead + "limits:\n  maxFrame: 2MB\n  clientQueue: 1MB\n",
              keyPath: "limits.clientQueue", line: 5, "must be at least maxFrame (2097152 bytes)"),
        .init("limits.watchQueue is at least 64KB", validHead + "limits:\n  watchQueue: 1KB\n",
              keyPath: "limits.watchQueue", line: 4, "must be at least 64KB"),
        .init("limits.watchQueueTotal holds one watcher's queue", validHead + "limits:\n  watchQueue: 2MB\n  watchQueueTotal: 1MB\n",
              keyPath: "limits.watchQueueTotal", line: 5, "must be at least watchQueue (2097152 bytes)"),
        .init("limits.helloFrame is not above maxFrame", validHead + "limits:\n  maxFrame: 2KB\n  helloFrame: 4KB\n",
              keyPath: "limits.helloFrame", line: 5, "must not be above maxFrame"),
        .init("limits.helloFrame is at least 1KB", validHead + "limits:\n  helloFrame: 100\n",
              keyPath: "limits.helloFrame", line: 4, "must be at least 1KB"),
        .init("limit counts are at least 1", validHead + "limits:\n  inFlightPerClient: 0\n",
              keyPath: "limits.inFlightPerClient", line: 4, "at least 1"),
        .init("limit durations are above zero", validHead + "limits:\n  idleTimeout: 0s\n",
              keyPath: "limits.idleTimeout", line: 4, "must be longer than zero"),
        .init("limits.timeout is a duration", validHead + "limits:\n  timeout: 30\n", keyPath: "limits.timeout",
              line: 4, "add a unit"),
        .init("limits.maxFrame is a byte size", validHead + "limits:\n  maxFrame: big\n", keyPath: "limits.maxFrame",
              line: 4, "expected a byte size"),
        .init("limits.maxFrame is at most 256MiB", validHead + "limits:\n  maxFrame: 257MB\n",
              keyPath: "limits.maxFrame", line: 4, "must be between 1 byte and 256MiB"),
        .init("limits.maxFrame is at least 1 byte", validHead + "limits:\n  maxFrame: 0\n",
              keyPath: "limits.maxFrame", line: 4, "must be between 1 byte and 256MiB, got 0 bytes"),
    ]

    @Test(arguments: documentCases + listenCases + authCases)
    func documentListenAndAuthRules(_ rule: ErrorCase) {
        check(rule)
    }

    @Test(arguments: domainCases + routeCases)
    func domainAndRouteRules(_ rule: ErrorCase) {
        check(rule)
    }

    @Test(arguments: workerCases + limitCases)
    func workerAndLimitRules(_ rule: ErrorCase) {
        check(rule)
    }

    private func check(_ rule: ErrorCase) {
        guard let error = parseError(rule.yaml) else { return }
        #expect(error.file == "test.yml")
        #expect(error.keyPath == rule.keyPath, "\(error)")
        #expect(error.line == rule.line, "\(error)")
        for fragment in rule.gist {
            #expect(error.problem.contains(fragment), "\(error)")
        }
    }

    @Test func aUnixPathTooLongOnceResolvedIsReportedWithTheBase() throws {
        let base = "/srv/" + String(repeating: "deep/", count: 20)
        let error = try #require(parseError(validHead, baseDirectory: base))
        #expect(error.keyPath == "listen.clients")
        #expect(error.line == 1)
        #expect(error.problem.contains("longer than 107 bytes"))
        #expect(error.problem.contains("\"c.sock\" resolved against \(base.dropLast())"))
    }
}

@Suite struct SuggestionTests {
    @Test(arguments: [("polcy", "policy"), ("tiemout", "timeout"), ("upstraem", "upstream"), ("wher", "where")])
    func closeMisspellingsGetASuggestion(typo: String, meant: String) throws {
        let error = try #require(parseError(validHead + "routes: [{match: a, domain: static, \(typo): x}]\n"))
        #expect(error.keyPath == "routes[0].\(typo)")
        #expect(error.problem.hasSuffix("(did you mean \"\(meant)\"?)"))
    }

    @Test(arguments: ["colour", "x", "priority"])
    func distantKeysGetNone(key: String) throws {
        let error = try #require(parseError(validHead + "routes: [{match: a, domain: static, \(key): x}]\n"))
        #expect(error.problem == "unknown key \"\(key)\"; expected match, host, where, domain, upstream, ttl, timeout, policy, public, headers or httpBody")
    }
}
