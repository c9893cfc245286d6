import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Monarch
import MonarchClient
import MonarchWire
import TestOrigins
import Testing

/// The client library against a real coordinator with real workers: typed answers and each
/// kind of error, cancellation, the client's own deadline and heartbeats.
@Suite("Client library", .serialized)
struct ClientLibraryTests {
    struct Answer: Decodable, Sendable, Equatable { var answer: Int }

    struct AnswerRequest: MonarchRequest {
        typealias Response = Answer
        var path: String
        var deadline: Duration?
        var previewData: Answer { Answer(answer: 0) }
        init(_ path: String, deadline: Duration? = nil) {
            self.path = path
            self.deadline = deadline
        }
    }

    @Test("Typed answers, and each error kind: notFound, upstreamStatus, chainFailure, decoding, timeout, cancelled, cannotConnect")
    func typedAndErrors() async throws {
        try await withClientOriginCluster { cluster, _ in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }

            #expect(try await client.perform(AnswerRequest("docs/data.json")) == Answer(answer: 42))

            let missing = await monarchError { () async throws(MonarchError) in try await client.perform(AnswerRequest("docs/none.json")) }
            guard case .notFound(let chain)? = missing else {
                Issue.record("expected notFound, got \(String(describing: missing))")
                return
            }
            #expect(chain.attempts.map(\.provider) == ["bundle"])

            // A 4xx from the upstream is a response: never decoded, kept with its body.
            let forbidden = await monarchError { () async throws(MonarchError) in try await client.perform(AnswerRequest("api/status/403")) }
            guard case .upstreamStatus(let response)? = forbidden else {
                Issue.record("expected upstreamStatus, got \(String(describing: forbidden))")
                return
            }
            #expect(response.status == 403)
            #expect(String(decoding: response.body, as: UTF8.self) == "status 403")

            // A 5xx is the network worker's failure: the chain failed, each attempt listed.
            let broken = await monarchError { () async throws(MonarchError) in try await client.perform(AnswerRequest("api/status/500")) }
            guard case .chainFailure(let failure)? = broken else {
                Issue.record("expected chainFailure, got \(String(describing: broken))")
                return
            }
            #expect(failure.code == .exhausted)
            #expect(failure.attempts.contains { $0.provider == "network" && $0.code == "upstreamStatus" })

            let noRoute = await monarchError { () async throws(MonarchError) in try await client.perform(AnswerRequest("elsewhere/x")) }
            #expect(noRoute?.chainError?.code == .noRoute, "\(String(describing: noRoute))")

            let notJSON = await monarchError { () async throws(MonarchError) in try await client.perform(AnswerRequest("docs/hello.txt")) }
            guard case .decoding(let type, _, let prefix)? = notJSON else {
                Issue.record("expected decoding, got \(String(describing: notJSON))")
                return
            }
            #expect(type == "Answer")
            #expect(prefix == "Hello, Monarch!\n")

            let slow = await monarchError { () async throws(MonarchError) in
                try await client.perform(AnswerRequest("api/slow?ms=5000", deadline: .milliseconds(400)))
            }
            guard case .timeout(let late)? = slow else {
                Issue.record("expected timeout, got \(String(describing: slow))")
                return
            }
            // The network worker keeps a margin: it gives up first, within the deadline.
            #expect(late.code == .deadlineExceeded || late.attempts.contains { $0.code == "timeout" }, "\(late)")

            let asking = Task { await monarchError { () async throws(MonarchError) in try await client.perform(AnswerRequest("api/slow?ms=20000")) } }
            try await eventually("the slow request to be in flight") { try await cluster.status(via: client).typed.requestsInFlight == 1 }
            asking.cancel()
            #expect(try await within(20, "the cancelled request") { await asking.value } == .cancelled)
            try await eventually("the coordinator to drop the cancelled request") {
                try await cluster.status(via: client).typed.requestsInFlight == 0
            }

            // A domain is one name on the wire; a union is refused before anything is sent.
            let union = await monarchError { () async throws(MonarchError) in
                try await client.perform(Request(path: "docs/hello.txt", domain: [RequestDomain("api"), RequestDomain("static")]))
            }
            #expect(union?.chainError?.code == .invalidRequest)
            #expect(try await client.perform(Request(path: "docs/hello.txt", domain: "static")).status == 200)

            let nowhere = await monarchError { () async throws(MonarchError) in
                try await MonarchClient.connect(to: .unix(path: cluster.folder.path + "/nothing.sock"))
            }
            guard case .transport(let transport)? = nowhere else {
                Issue.record("expected transport, got \(String(describing: nowhere))")
                return
            }
            #expect(transport.kind == .cannotConnect)
        }
    }

    @Test("The client enforces deadlines itself, and heartbeats find a coordinator that stopped answering")
    func clientDeadlineAndHeartbeat() async throws {
        try await TestCluster.with { cluster in
            let quiet = try await cluster.connect(options: MonarchClient.Options(heartbeat: nil, deadlineMargin: .milliseconds(200)))
            let beating = try await cluster.connect(options: MonarchClient.Options(heartbeat: .milliseconds(200), retries: 0))
            defer { Task { await quiet.close(); await beating.close() } }
            #expect(try await quiet.perform(Request(path: "docs/hello.txt")).status == 200)

            cluster.up.signal(SIGSTOP)
            defer { cluster.up.signal(SIGCONT) }
            try await eventually("the coordinator to stop", every: .milliseconds(1)) { processIsStopped(cluster.up.pid) }
            // Sent at once, so it is in flight when the heartbeats give up (three silent
            // intervals, 600 ms); sent later it would find the link already closed.
            let beatingCall = Task {
                await monarchError { () async throws(MonarchError) in try await beating.perform(Request(path: "docs/other.txt")) }
            }
            let late = await monarchError { () async throws(MonarchError) in
                try await quiet.perform(Request(path: "docs/hello.txt", deadline: .milliseconds(300)))
            }
            guard case .timeout(let chain)? = late else {
                Issue.record("expected the client's timeout, got \(String(describing: late))")
                return
            }
            #expect(chain.message.contains("no answer"), "\(chain)")

            // Without retries, the GET in flight ends with the link the heartbeats gave up on,
            // long before its 30 s deadline.
            let lost = try await within(20, "the heartbeats to give up") { await beatingCall.value }
            guard case .transport(let transport)? = lost else {
                Issue.record("expected a lost connection, got \(String(describing: lost))")
                return
            }
            #expect(transport.kind == .connectionLost)
            #expect(transport.message.contains("heartbeat"), "\(transport)")

            cluster.up.signal(SIGCONT)
            // Both recover: the quiet client's link was never lost, the other one reconnects.
            #expect(try await within(30, "an answer after SIGCONT") { try await quiet.perform(Request(path: "docs/hello.txt")) }.status == 200)
            #expect(try await within(30, "a reconnection") { try await beating.perform(Request(path: "docs/hello.txt")) }.status == 200)
        }
    }

    @Test("Clients share one loop thread; a client dropped without close() closes its connection")
    func sharedLoopAndForgottenClients() async throws {
        // The client loop's threads by name: other tests of this process start threads of
        // their own meanwhile, so a count of every thread would measure them too.
        func clientLoopThreads() -> Int {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            return tasks.filter { task in
                (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "monarch-client"
            }.count
        }
        try await TestCluster.with { cluster in
            let observer = try await cluster.connect()
            defer { Task { await observer.close() } }
            #expect(clientLoopThreads() == 1, "the observer runs on the shared client loop")
            let baseline = try await cluster.status(via: observer).clients
            do {
                var clients: [MonarchClient] = []
                for _ in 0..<20 { clients.append(try await cluster.connect()) }
                for client in clients { #expect(try await client.perform(Request(path: "docs/hello.txt")).status == 200) }
                #expect(try await cluster.status(via: observer).clients == baseline + 20)
                // 20 connections, no thread each (a loop thread per client would add 20).
                #expect(clientLoopThreads() == 1, "client loop threads with 20 clients: \(clientLoopThreads())")
            }
            // Released without close(): each one closes its connection.
            try await eventually("the forgotten clients to disconnect") {
                try await cluster.status(via: observer).clients == baseline
            }
        }
    }

    @Test("TCP with a host name and a token: the name resolves, a missing or wrong token is refused")
    func tcpWithToken() async throws {
        let port = UInt16(try freeLocalPort())
        try await TestCluster.with(ClusterOptions(token: "s3cret", tcpPort: port)) { cluster in
            let address = SocketAddress.tcp(host: "localhost", port: port)
            let client = try await within(20, "connecting over TCP") {
                try await MonarchClient.connect(to: address, options: MonarchClient.Options(token: "s3cret"))
            }
            #expect(try await client.perform(Request(path: "docs/hello.txt")).status == 200)
            await client.close()
            for token in [nil, "wrong"] as [String?] {
                let refused = await monarchError { () async throws(MonarchError) in
                    try await MonarchClient.connect(to: address, options: MonarchClient.Options(token: token))
                }
                guard case .transport(let transport)? = refused else {
                    Issue.record("token \(String(describing: token)): expected a refusal, got \(String(describing: refused))")
                    continue
                }
                #expect(transport.kind == .cannotConnect)
            }
        }
    }

    @Test("A request too large for a frame is refused on the client; the connection goes on")
    func oversizedRequest() async throws {
        try await TestCluster.with { cluster in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            // 17 MB of body is over the 16 MiB frame, even as raw bytes.
            let huge = await monarchError { () async throws(MonarchError) in
                try await client.perform(Request(path: "docs/hello.txt", method: "PUT", body: Data(count: 17_000_000)))
            }
            #expect(huge?.chainError?.code == .requestTooLarge, "\(String(describing: huge))")
            #expect(try await client.perform(Request(path: "docs/hello.txt")).status == 200)
            #expect(try await cluster.status(via: client).clients >= 1)
        }
    }
}
