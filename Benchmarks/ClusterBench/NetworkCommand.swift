import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Monarch
import MonarchClient
import MonarchLoop
import MonarchNetwork
import MonarchWire

/// `monarch-bench network`: fetches per second through the coordinator and the network worker
/// (cache bypassed) against a local nginx, and the same nginx hit directly by the same tool.
struct NetworkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "network",
        abstract: "Fetches per second through the coordinator (cache bypassed) vs. straight to the origin, one run.",
        discussion: """
            Starts nginx on 127.0.0.1 serving a 1 KB JSON file, and a cluster whose api domain \
            is [cache, network] with that nginx as upstream. The same closed-loop load (N in \
            flight) runs twice: over the Monarch protocol through the coordinator with policy \
            noCache (a distinct query per request, so nothing is coalesced), and directly over \
            HTTP with libcurl's multi interface on a libuv loop — the network worker's own \
            fetcher. The ratio is printed.
            """
    )

    @Option(help: "Requests kept in flight.") var inFlight = 64
    @Option(help: "Seconds measured per figure.") var seconds = 5.0
    @Option(help: "Network workers.") var networkWorkers = 1
    @Option(help: "The nginx executable.") var nginx = "/usr/sbin/nginx"

    func run() async throws {
        let origin = try NginxOrigin(executable: nginx)
        say("nginx up on \(origin.port)")
        defer { origin.stop() }
        let duration = Duration.milliseconds(Int64(seconds * 1000))
        guard CurlLibrary.initialize() else { throw BenchError("curl_global_init failed") }

        // Directly: HTTP over libcurl multi on a libuv loop.
        let httpLoop = try EventLoop(name: "bench-http")
        defer { _ = httpLoop.shutdown() }
        let multi = try await httpLoop.submit { try CurlMulti(on: httpLoop) }
        say("multi made")
        let url = "http://127.0.0.1:\(origin.port)/data.json"
        let direct = await withTaskExecutorPreference(httpLoop) {
            await LoadRun(inFlight: inFlight, duration: duration).run { _, _ in
                if case .answered(let response) = await multi.fetch(FetchSpec(url: url)) {
                    return response.status == 200 && response.body.count == 1024
                }
                return false
            }
        }
        await multi.close()

        // Through the coordinator.
        let cluster = try BenchCluster(configuration: """
            domains:
              api: [cache, network]
            routes:
              - match: "api/..."
                domain: api
                upstream: http://127.0.0.1:\(origin.port)/...
            workers:
              cache: { count: 1, memory: 64MB }
              network: { count: \(networkWorkers), allow: ["127.0.0.1:\(origin.port)"] }

            """, files: [:])
        defer { cluster.stop() }
        let loop = try EventLoop(name: "bench-client")
        defer { _ = loop.shutdown() }
        let client = try await MonarchClient.connect(to: cluster.clientAddress, options: .init(loop: loop))
        let probe = try await client.perform(Request(path: "api/data.json", policy: .noCache))
        guard probe.status == 200, probe.body.count == 1024, probe.source == "network" else {
            throw BenchError("the cluster did not fetch the origin: \(probe.status) from \(probe.source ?? "?")")
        }
        let through = await withTaskExecutorPreference(loop) {
            await LoadRun(inFlight: inFlight, duration: duration).run { slot, sequence in
                let request = Request(
                    path: "api/data.json", query: [QueryItem(name: "n", value: "\(slot)-\(sequence)")], policy: .noCache)
                guard let response = try? await client.perform(request) else { return false }
                return response.status == 200 && response.body.count == 1024
            }
        }
        await client.close()

        say("network fetches of a 1 KB JSON from nginx on 127.0.0.1, \(inFlight) in flight, \(seconds) s each")
        say(direct.line("  direct (libcurl multi on libuv)"))
        say(through.line("  through the coordinator (noCache, \(networkWorkers) network worker\(networkWorkers == 1 ? "" : "s"))"))
        let ratio = direct.perSecond > 0 ? through.perSecond / direct.perSecond : 0
        say("  ratio: \(Int((ratio * 100).rounded())) % of direct")
    }
}

/// nginx in a temporary prefix, serving `data.json` (1 KB) on a free 127.0.0.1 port.
final class NginxOrigin: @unchecked Sendable {
    let folder: String
    let port: Int
    let process = Process()

    init(executable: String) throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw BenchError("\(executable) is missing: apt-get install nginx-light (scripts/bench installs it)")
        }
        folder = NSTemporaryDirectory() + "monarch-nginx-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder + "/logs", withIntermediateDirectories: true)
        var json = #"{"items":["#
        var index = 0
        while json.utf8.count < 1000 {
            json += (index == 0 ? "" : ",") + #"{"id":\#(index),"name":"item"}"#
            index += 1
        }
        json += "]}"
        json += String(repeating: " ", count: 1024 - json.utf8.count)
        try Data(json.utf8).write(to: URL(fileURLWithPath: folder + "/data.json"))
        port = try freePort()
        let conf = """
            worker_processes 1;
            daemon off;
            master_process off;
            error_log \(folder)/logs/error.log warn;
            pid \(folder)/nginx.pid;
            events { worker_connections 1024; }
            http {
                access_log off;
                keepalive_requests 1000000;
                server {
                    listen 127.0.0.1:\(port);
                    location / { root \(folder); default_type application/json; }
                }
            }
            """
        try Data(conf.utf8).write(to: URL(fileURLWithPath: folder + "/nginx.conf"))
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-p", folder, "-c", folder + "/nginx.conf"]
        try process.run()
        // Ready when it accepts a connection (bounded: 10 s).
        let start = Date()
        while !canConnect(port: port) {
            guard process.isRunning, Date().timeIntervalSince(start) < 10 else {
                stop()
                throw BenchError("nginx did not start; see its error log")
            }
            usleep(20_000)
        }
    }

    /// Stops nginx (SIGTERM, then SIGKILL after 5 s) and removes its folder.
    func stop() {
        if process.isRunning {
            process.terminate()
            let start = Date()
            while process.isRunning, Date().timeIntervalSince(start) < 5 { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        try? FileManager.default.removeItem(atPath: folder)
    }
}

/// A port on 127.0.0.1 nothing listens on now.
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { throw BenchError("cannot find a free port: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts connections on 127.0.0.1:`port`.
func canConnect(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}
