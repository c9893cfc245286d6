import Foundation
@testable import MonarchConfig
import MonarchWire
import Testing

@Suite struct DefaultAndExampleTests {
    static let environment = ["XDG_RUNTIME_DIR": "/run/user/1000"]

    @Test func theDefaultServesTheWorkingDirectoryWithItsSocketsInItsRuntimeFolder() throws {
        let configuration = try Configuration.defaultConfiguration(baseDirectory: "/srv/app", environment: Self.environment)
        let runtime = "/run/user/1000/monarch/" + RuntimeDirectory.identifier(of: "/srv/app")
        #expect(configuration == Configuration(
            listen: .init(
                clients: [.unix(path: runtime + "/monarch.sock")], workers: .unix(path: runtime + "/workers.sock"),
                http: [.tcp(host: "127.0.0.1", port: 8080)]),
            token: nil,
            domains: [.init(name: "files", providers: ["bundle"]), .init(name: "api", providers: ["cache", "network"])],
            routes: [
                .init(match: "...", domain: "files"),
                .init(match: "api/...", domain: "api", upstream: "http://127.0.0.1:8081/...", ttl: .seconds(60)),
            ],
            workers: [
                .init(kind: "bundle", count: 1, settings: .bundle(.init(root: "/srv/app", latency: .zero))),
                .init(kind: "cache", count: 1, settings: .cache(.init(store: nil, memoryBytes: 64 << 20))),
                .init(kind: "network", count: 1, settings: .network(.init(allow: ["127.0.0.1:8081"]))),
            ]
        ))
        #expect(configuration.limits == Configuration.Limits())
    }

    @Test func theDefaultTextIsCommentedYAML() throws {
        let text = Configuration.defaultYAML(runtimeDirectory: "/run/user/1000/monarch/" + RuntimeDirectory.identifier(of: "/x"))
        #expect(text.contains("# "))
        #expect(try Configuration.parse(yaml: text, baseDirectory: "/x")
            == Configuration.defaultConfiguration(baseDirectory: "/x", environment: Self.environment))
    }

    @Test func monarchHTTPMovesTheDefaultsHTTPListenerOrTurnsItOff() throws {
        func http(_ value: String) throws -> [SocketAddress] {
            try Configuration.defaultConfiguration(
                baseDirectory: "/x", environment: Self.environment.merging(["MONARCH_HTTP": value]) { $1 }
            ).listen.http
        }
        #expect(try http("tcp:127.0.0.1:0") == [.tcp(host: "127.0.0.1", port: 0)])
        #expect(try http("tcp:[::1]:9000") == [.tcp(host: "::1", port: 9000)])
        #expect(try http("unix:/run/h.sock") == [.unix(path: "/run/h.sock")])
        #expect(try http("off") == [])
        // A value the front door may not take names the variable, never a line of the default.
        for bad in ["tcp:0.0.0.0:8080", "8080", ""] {
            #expect {
                try http(bad)
            } throws: { error in
                let text = "\(error)"
                return text.hasPrefix("MONARCH_HTTP: ") && text.contains("(expected an address such as")
            }
        }
    }

    @Test func theDefaultNeverFailsEvenUnderAVeryLongWorkingDirectory() throws {
        let base = "/" + String(repeating: "a-rather-long-folder-name/", count: 8)
        let configuration = try Configuration.defaultConfiguration(baseDirectory: base, environment: Self.environment)
        // The sockets are in the runtime folder, whose name is short whatever the working directory.
        #expect(configuration.listen.clients.count == 1)
        #expect("\(configuration.listen.clients[0])".hasPrefix("unix:/run/user/1000/monarch/"))
        #expect(configuration.workers.first?.settings == .bundle(.init(root: String(base.dropLast()), latency: .zero)))
    }

    @Test func aRelativeBaseDirectoryIsTakenFromTheWorkingDirectory() throws {
        let configuration = try Configuration.defaultConfiguration(baseDirectory: ".", environment: [:])
        let cwd = FileManager.default.currentDirectoryPath
        #expect(configuration.workers.first?.settings == .bundle(.init(root: cwd, latency: .zero)))
    }

    @Test func theExampleParsesAndShowsEveryLimitWithItsDefault() throws {
        let example = try Configuration.load(file: packageRoot + "/Examples/monarch.yml", environment: [:])
        #expect(example.listen.clients == [.unix(path: packageRoot + "/Examples/.monarch/monarch.sock")])
        // The README's first minute: scripts/launch, then curl localhost:8080/hello.txt; api/...
        // goes to origin.py, on another port.
        #expect(example.listen.http == [.tcp(host: "127.0.0.1", port: 8080)])
        #expect(example.routes.contains { $0.upstream == "http://\(Configuration.exampleOrigin)/..." })
        let origin = try String(contentsOfFile: packageRoot + "/Examples/origin.py", encoding: .utf8)
        #expect(origin.contains(#"("127.0.0.1", 8081)"#) && Configuration.exampleOrigin == "127.0.0.1:8081")
        #expect(example.limits == Configuration.Limits())
        let text = try String(contentsOfFile: packageRoot + "/Examples/monarch.yml", encoding: .utf8)
        for key in Configuration.limitKeys {
            #expect(text.contains("#   \(key): "), "Examples/monarch.yml does not show limits.\(key)")
        }
    }

    @Test func theComposeConfigurationParsesAndLaunchesNoWorkers() throws {
        let secrets = ["MONARCH_TOKEN": "secret", "MONARCH_ADMIN_TOKEN": "admin", "MONARCH_WORKER_TOKEN": "worker"]
        let compose = try Configuration.load(file: packageRoot + "/Examples/compose/monarch.yml", environment: secrets)
        #expect(compose.token == "secret" && compose.adminToken == "admin" && compose.workerToken == "worker")
        #expect(compose.listen.clients == [.tcp(host: "0.0.0.0", port: 7400)])
        #expect(compose.listen.workers == .unix(path: "/run/monarch/workers.sock"))
        #expect(compose.workers.map(\.count) == [0, 0, 0])
        // docker-compose.yml's three worker services dial in there, each with the workers'
        // secret (and no other).
        let services = try String(contentsOfFile: packageRoot + "/docker-compose.yml", encoding: .utf8)
        #expect(services.components(separatedBy: #""--coordinator", "unix:/run/monarch/workers.sock""#).count == 4)
        #expect(services.contains("MONARCH_TOKEN: ${MONARCH_TOKEN:?"))
        #expect(services.contains("MONARCH_WORKER_TOKEN: ${MONARCH_WORKER_TOKEN:?"))
        // Without the token its non-loopback listener is refused.
        #expect(throws: ConfigError.self) {
            try Configuration.load(file: packageRoot + "/Examples/compose/monarch.yml", environment: [:])
        }
    }

    @Test func theSharedComposeConfigurationUsesOneRedis() throws {
        let shared = try Configuration.load(
            file: packageRoot + "/Examples/compose/shared.yml",
            environment: ["MONARCH_TOKEN": "secret", "MONARCH_ADMIN_TOKEN": "admin", "REDIS_PASSWORD": "pw"])
        guard case .cache(let cache)? = shared.workers.first(where: { $0.kind == "cache" })?.settings else {
            Issue.record("no cache pool")
            return
        }
        #expect(cache.store == "redis://redis:6379/0")
        #expect(cache.password == "pw")
        #expect(cache.usesRedis)
        // docker-compose.yml's shared profile runs it twice, beside a Redis.
        let services = try String(contentsOfFile: packageRoot + "/docker-compose.yml", encoding: .utf8)
        #expect(services.components(separatedBy: "/srv/monarch/compose/shared.yml").count == 2)
        #expect(services.contains("coordinator-b:"))
        #expect(services.contains("profiles: [shared]"))
    }

    @Test func theExampleBundleServesItsFiles() throws {
        let bundle = packageRoot + "/Examples/Bundle"
        let hello = try String(contentsOfFile: bundle + "/hello.txt", encoding: .utf8)
        #expect(hello == "Hello from the Monarch bundle.\n")
        let index = try String(contentsOfFile: bundle + "/docs/index.html", encoding: .utf8)
        #expect(index.contains("<html"))
        let user = try #require(FileManager.default.contents(atPath: bundle + "/data/users/1.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: user) as? [String: Any])
        #expect(object["id"] as? Int == 1)
        #expect(object["name"] is String)
    }
}

@Suite struct HTTPListenTests {
    @Test func httpListenersAreReadAndMustBeLocal() throws {
        let base = "listen: {clients: unix:c.sock, workers: unix:w.sock, http: %@}\ndomains: {s: [bundle]}\nroutes: [{match: \"...\", domain: s}]\nworkers: {bundle: {root: b}}\n"
        let one = try Configuration.parse(yaml: base.replacingOccurrences(of: "%@", with: "tcp:127.0.0.1:8088"), baseDirectory: "/x")
        #expect(one.listen.http == [.tcp(host: "127.0.0.1", port: 8088)])
        let two = try Configuration.parse(yaml: base.replacingOccurrences(of: "%@", with: "[\"tcp:[::1]:8088\", unix:h.sock]"), baseDirectory: "/x")
        #expect(two.listen.http == [.tcp(host: "::1", port: 8088), .unix(path: "/x/h.sock")])
        #expect(throws: ConfigError.self) {
            try Configuration.parse(yaml: base.replacingOccurrences(of: "%@", with: "tcp:0.0.0.0:8088"), baseDirectory: "/x")
        }
        #expect(throws: ConfigError.self) {
            try Configuration.parse(yaml: base.replacingOccurrences(of: "%@", with: "unix:c.sock"), baseDirectory: "/x")
        }
        // With a client secret, TCP would let any local user past it: Unix sockets only.
        let withToken = base.replacingOccurrences(of: "listen:", with: "auth: {token: s}\nlisten:")
        #expect(throws: ConfigError.self) {
            try Configuration.parse(yaml: withToken.replacingOccurrences(of: "%@", with: "tcp:127.0.0.1:8088"), baseDirectory: "/x")
        }
        #expect(try Configuration.parse(yaml: withToken.replacingOccurrences(of: "%@", with: "unix:h.sock"), baseDirectory: "/x")
            .listen.http == [.unix(path: "/x/h.sock")])
    }

    @Test func theHTTPLimitsHaveTheirDefaultsAndAreRead() throws {
        let defaults = Configuration.Limits()
        #expect(defaults.httpRequestLineBytes == 8000 && defaults.httpHeaderBlockBytes == 32 << 10 && defaults.httpHeaders == 100)
        #expect(defaults.httpBodyBytes == 1 << 20 && defaults.httpHeaderTimeout == .seconds(10) && defaults.httpKeepAlive == .seconds(75))
        #expect(defaults.httpRequests == 1000 && defaults.httpConnectionAge == .seconds(3600))
        let yaml = "listen: {clients: unix:c.sock, workers: unix:w.sock}\ndomains: {s: [bundle]}\nroutes: [{match: \"...\", domain: s}]\nworkers: {bundle: {root: b}}\nlimits: {httpBody: 4MB, httpKeepAlive: 5s, httpRequests: 10}\n"
        let limits = try Configuration.parse(yaml: yaml, baseDirectory: "/x").limits
        #expect(limits.httpBodyBytes == 4 << 20 && limits.httpKeepAlive == .seconds(5) && limits.httpRequests == 10)
    }
}
