#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Monarch
import MonarchClient
import MonarchWire
import Testing
import TestOrigins

/// A cluster whose `static` domain is served by workers the test plays (none start), with
/// `limits` (YAML lines under `limits:`) and any `extra` top-level YAML.
func fakeWorkerCluster(
    limits: [String] = [], extra: String = "", token: String? = nil, workerToken: String? = nil
) -> ClusterOptions {
    var options = ClusterOptions()
    options.token = token
    options.workerToken = workerToken
    options.custom = """
        domains:
          static: [bundle]
        routes:
          - match: "docs/..."
            domain: static
        workers:
          bundle: {count: 0, root: $FOLDER/Bundle}
        """ + (limits.isEmpty ? "" : "\nlimits:\n" + limits.map { "  \($0)" }.joined(separator: "\n")) + "\n" + extra
    return options
}

extension TestCluster {
    var workerPath: String { folder.path + "/w.sock" }
    var clientPath: String { folder.path + "/c.sock" }
}

/// Starts `request` on `client` in a task of its own.
func start(_ client: MonarchClient, _ request: Request) -> Task<Result<Response, MonarchError>, Never> {
    Task { await outcome(client, request) }
}

func text(_ result: Result<Response, MonarchError>) -> String? {
    result.success.map { String(decoding: $0.body, as: UTF8.self) }
}

func chainCode(_ result: Result<Response, MonarchError>) -> ChainError.Code? {
    result.failure?.chainError?.code
}

@Suite("Hardening: one client cannot see another's data")
struct PrivacyTests {
    @Test("A private answer is not handed to a client that joined the trip: it gets a trip of its own")
    func privateAnswersAreNotShared() async throws {
        try await TestCluster.with(fakeWorkerCluster()) { cluster in
            let worker = try await FakeWorker(at: cluster.workerPath, name: "fake")
            let alice = try await cluster.connect()
            let bob = try await cluster.connect()
            defer { Task { await alice.close(); await bob.close() } }
            let alicesAnswer = start(alice, Request(path: "docs/me", deadline: .seconds(10)))
            let first = try await worker.nextRequest()
            let bobsAnswer = start(bob, Request(path: "docs/me", deadline: .seconds(10)))
            try await eventually("bob to join alice's trip") { try await cluster.status().tripsJoined == 1 }
            worker.respond(first.id, "you are alice-secret", headers: ["set-cookie": "sid=alice-secret"])
            #expect(text(await alicesAnswer.value) == "you are alice-secret")
            // Bob's own trip: the worker is asked again, and Bob gets that answer only.
            let second = try await within(10, "bob's own request") { try await worker.nextRequest() }
            worker.respond(second.id, "you are nobody")
            let bobs = await bobsAnswer.value
            #expect(text(bobs) == "you are nobody")
            #expect(bobs.success?.headers["set-cookie"] == nil)
            #expect(try await cluster.status().counter("joinersAskedAlone") == 1)
        }
    }

    @Test("A request carrying an API key never shares a trip; a JSON client never gets an XML client's trip")
    func personalAndNegotiatedRequestsAreKeptApart() async throws {
        try await TestCluster.with(fakeWorkerCluster()) { cluster in
            let worker = try await FakeWorker(at: cluster.workerPath, name: "fake")
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            let keyed = start(client, Request(path: "docs/me", headers: ["X-Api-Key": "alice-secret"], deadline: .seconds(10)))
            let plain = start(client, Request(path: "docs/me", deadline: .seconds(10)))
            let json = start(client, Request(path: "docs/list", headers: ["Accept": "application/json"], deadline: .seconds(10)))
            let xml = start(client, Request(path: "docs/list", headers: ["Accept": "application/xml"], deadline: .seconds(10)))
            var requests: [RequestMessage] = []
            for _ in 0..<4 { requests.append(try await within(10, "four separate trips") { try await worker.nextRequest() }) }
            for request in requests {
                // Header names are compared case-insensitively (the coordinator sends them in lowercase).
                func header(_ name: String) -> String? { request.headers?.first { $0.key.lowercased() == name }?.value }
                let body = header("x-api-key").map { "key \($0)" } ?? header("accept") ?? "anonymous"
                worker.respond(request.id, body)
            }
            #expect(text(await keyed.value) == "key alice-secret")
            #expect(text(await plain.value) == "anonymous")
            #expect(text(await json.value) == "application/json")
            #expect(text(await xml.value) == "application/xml")
            #expect(try await cluster.status().tripsJoined == 0)
        }
    }
}

@Suite("Hardening: budgets, caps and turns")
struct FairnessTests {
    @Test("One client's short deadline does not fail a joiner with more time: the worker is asked again with its budget")
    func budgetFollowsTheLongestWaiter() async throws {
        try await TestCluster.with(fakeWorkerCluster()) { cluster in
            let worker = try await FakeWorker(at: cluster.workerPath, name: "fake")
            let hasty = try await cluster.connect()
            let patient = try await cluster.connect()
            defer { Task { await hasty.close(); await patient.close() } }
            // 3 s: the patient client must join before the hasty one leaves, however loaded the machine.
            let hastyAnswer = start(hasty, Request(path: "docs/slow", deadline: .seconds(3)))
            let first = try await worker.nextRequest()
            #expect((first.deadlineMs ?? .max) <= 3_000)
            let patientAnswer = start(patient, Request(path: "docs/slow", deadline: .seconds(10)))
            try await eventually("the patient client to join") { try await cluster.status().tripsJoined == 1 }
            #expect(chainCode(await hastyAnswer.value) == .deadlineExceeded)
            // The worker ran out of the short budget it was given, as a network worker would.
            worker.fail(first.id, code: "timeout", "no answer within the budget")
            let second = try await within(10, "the request asked again") { try await worker.nextRequest() }
            #expect((second.deadlineMs ?? 0) > 4_000, "the second ask carries the patient client's budget, not the hasty one's 3 s")
            worker.respond(second.id, "worth the wait")
            #expect(text(await patientAnswer.value) == "worth the wait")
        }
    }

    @Test("Requests past a connection's share, or the coordinator's, are answered overloaded at once")
    func inFlightCaps() async throws {
        try await TestCluster.with(fakeWorkerCluster(limits: ["inFlightPerClient: 2", "inFlight: 3"])) { cluster in
            let worker = try await FakeWorker(at: cluster.workerPath, name: "fake")
            let one = try await cluster.connect()
            let two = try await cluster.connect()
            defer { Task { await one.close(); await two.close() } }
            let held = [start(one, Request(path: "docs/a")), start(one, Request(path: "docs/b"))]
            var forwarded: [RequestMessage] = []
            for _ in 0..<2 { forwarded.append(try await worker.nextRequest()) }
            let third = try await perform(one, Request(path: "docs/c"))
            #expect(third.failure?.code == .overloaded, "the connection's share is 2")
            #expect(third.failure?.message.contains("limits.inFlightPerClient") == true)
            let heldByTwo = start(two, Request(path: "docs/d"))
            forwarded.append(try await worker.nextRequest())
            let fourth = try await perform(two, Request(path: "docs/e"))
            #expect(fourth.failure?.code == .overloaded, "the coordinator's cap is 3")
            #expect(fourth.failure?.message.contains("limits.inFlight") == true)
            for request in forwarded { worker.respond(request.id, request.path) }
            for task in held + [heldByTwo] { #expect(await task.value.success != nil) }
            // Room again once answered.
            let after = start(one, Request(path: "docs/f"))
            let late = try await worker.nextRequest()
            worker.respond(late.id, "f")
            #expect(text(await after.value) == "f")
            #expect(try await cluster.status().counter("overloaded") == 1)
        }
    }

    @Test("A worker gets no more than its capacity; the rest wait, and clients take turns")
    func capacityAndTurns() async throws {
        // A queue of 16 frames: a fresh connection may start 16 requests before it has answers.
        try await TestCluster.with(fakeWorkerCluster(limits: ["clientQueue: 256MB"])) { cluster in
            let worker = try await FakeWorker(at: cluster.workerPath, name: "fake", capacity: 2)
            let greedy = try await cluster.connect()
            let modest = try await cluster.connect()
            defer { Task { await greedy.close(); await modest.close() } }
            let greedyTasks = (0..<6).map { start(greedy, Request(path: "docs/greedy\($0)")) }
            var outstanding = [try await worker.nextRequest(), try await worker.nextRequest()]
            try await eventually("the greedy client's other requests to wait") {
                try await cluster.status().counter("waitingForWorkers") == 4
            }
            let modestTask = start(modest, Request(path: "docs/modest"))
            try await eventually("the modest request to wait") { try await cluster.status().counter("waitingForWorkers") == 5 }
            #expect(try await cluster.status().workers("bundle").first?.inFlight == 2)
            // Each answer frees one slot; the modest client's request is served within two turns,
            // not after the four greedy ones that were waiting first.
            var order: [String] = []
            while order.count < 5 {
                let done = outstanding.removeFirst()
                worker.respond(done.id, done.path)
                let next = try await within(10, "the next request") { try await worker.nextRequest() }
                order.append(next.path)
                outstanding.append(next)
            }
            #expect(order.prefix(2).contains("docs/modest"), "\(order)")
            for request in outstanding { worker.respond(request.id, request.path) }
            for task in greedyTasks + [modestTask] { #expect(await task.value.success != nil) }
        }
    }
}

extension FairnessTests {
    @Test("Requests to one upstream host never take another host's slots: a worker's hostCapacity bounds each host")
    func perHostCapacity() async throws {
        var options = ClusterOptions()
        options.custom = """
            domains:
              api: [network]
            routes:
              - match: "a/..."
                domain: api
                upstream: http://127.0.0.1:9001/...
              - match: "b/..."
                domain: api
                upstream: http://127.0.0.1:9002/...
            workers:
              network: {count: 0}

            """
        try await TestCluster.with(options) { cluster in
            let worker = try await FakeNetworkWorker.register(at: cluster.workerPath, capacity: 4, hostCapacity: 2)
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            let toA = (0..<3).map { start(client, Request(path: "a/\($0)")) }
            var forwarded = [try await worker.nextRequest(), try await worker.nextRequest()]
            #expect(forwarded.allSatisfy { $0.upstream?.hasPrefix("http://127.0.0.1:9001/") == true })
            // The third request to host a waits; one to host b goes at once.
            let toB = start(client, Request(path: "b/0"))
            let third = try await worker.nextRequest()
            #expect(third.upstream?.hasPrefix("http://127.0.0.1:9002/") == true, "\(third.upstream ?? "")")
            forwarded.append(third)
            // A slot of host a frees: its waiting request goes.
            worker.respond(forwarded[0].id, "a")
            let fourth = try await worker.nextRequest()
            #expect(fourth.upstream?.hasPrefix("http://127.0.0.1:9001/") == true)
            forwarded.append(fourth)
            for request in forwarded.dropFirst() { worker.respond(request.id, request.path) }
            for task in toA + [toB] { #expect(await task.value.success != nil) }
        }
    }
}

/// A fake worker of kind `network`.
enum FakeNetworkWorker {
    static func register(at path: String, capacity: Int, hostCapacity: Int) async throws -> FakeWorker {
        try await FakeWorker(at: path, kind: "network", name: "net", capacity: capacity, hostCapacity: hostCapacity)
    }
}

@Suite("Hardening: connections")
struct ConnectionLimitTests {
    @Test("Before hello, a frame larger than helloFrame ends the connection with oversizedFrame")
    func smallFramesBeforeHello() async throws {
        try await TestCluster.with(fakeWorkerCluster()) { cluster in
            let socket = try RawSocket(path: cluster.clientPath)
            let reply = try await offPool { () -> WireMessage? in
                _ = socket.write([0x00, 0x10, 0x00, 0x00] + Array(repeating: UInt8(ascii: " "), count: 1000))
                return try socket.nextMessage()
            }
            guard case .error(let error)? = reply else {
                Issue.record("expected an error, got \(String(describing: reply))")
                return
            }
            #expect(error.code == .oversizedFrame)
            #expect(try await offPool { try socket.isClosedByPeer() })
            // After a hello, the full frame size applies: a 100 KB request is fine.
            let client = try await cluster.connect()
            let big = try await perform(client, Request(path: "docs/x", headers: ["x-pad": String(repeating: "p", count: 30_000)]))
            #expect(big.failure?.code != .requestTooLarge || big.failure?.message.contains("limits.headerBytes") == true)
            await client.close()
        }
    }

    @Test("A connection past the handshake cap pushes out the longest-waiting one at once; a silent one is closed after helloTimeout")
    func handshakeCapAndHelloTimeout() async throws {
        try await TestCluster.with(fakeWorkerCluster(limits: ["handshakes: 2", "helloTimeout: 10s"])) { cluster in
            // No wait between the connections: a Unix socket's backlog is a queue, so the
            // coordinator takes them in, and numbers their handshakes, in the order they came.
            let oldest = try RawSocket(path: cluster.clientPath)
            let silent = [try RawSocket(path: cluster.clientPath)]
            let newest = try RawSocket(path: cluster.clientPath)
            let start = ContinuousClock.now
            #expect(try await offPool { try oldest.isClosedByPeer() })
            #expect(ContinuousClock.now - start < .seconds(8), "pushed out at once, not by the 10 s hello timeout")
            for socket in silent + [newest] {
                let message = try await offPool { try socket.nextMessage() }
                guard case .error(let error)? = message else {
                    Issue.record("expected the hello timeout's error, got \(String(describing: message))")
                    continue
                }
                #expect(error.message.contains("no hello"))
            }
            // The slots are free again (a loaded machine may take a moment to see both closes).
            var connected: MonarchClient?
            try await eventually("a connection to get in again") {
                connected = try? await MonarchClient.connect(to: cluster.clientAddress)
                return connected != nil
            }
            let client = try #require(connected)
            let refusals = try await cluster.status(via: client).counter("connectionsRefused") ?? 0
            #expect(refusals >= 1, "coordinator log:\n\(cluster.up.stderr.text)")
            await client.close()
        }
    }

    @Test("Client connections past limits.clients are closed at once; workers still get in")
    func clientCap() async throws {
        try await TestCluster.with(fakeWorkerCluster(limits: ["clients: 2"])) { cluster in
            let one = try await cluster.connect()
            let two = try await cluster.connect()
            let third = try RawSocket(path: cluster.clientPath)
            #expect(try await offPool { try third.isClosedByPeer() })
            let worker = try await FakeWorker(at: cluster.workerPath, name: "fake")
            let answer = start(one, Request(path: "docs/a"))
            let request = try await worker.nextRequest()
            worker.respond(request.id, "a")
            #expect(text(await answer.value) == "a")
            await one.close()
            await two.close()
        }
    }

    @Test("A client silent for idleTimeout with nothing in flight is closed; one waiting for an answer is not")
    func idleTimeout() async throws {
        // Long enough that a busy machine does not starve the busy client between its connect
        // and its request.
        try await TestCluster.with(fakeWorkerCluster(limits: ["idleTimeout: 3s"])) { cluster in
            let idle = try RawSocket(path: cluster.clientPath)
            guard case .welcome? = try await offPool({ try idle.greet() }) else {
                Issue.record("no welcome")
                return
            }
            let worker = try await FakeWorker(at: cluster.workerPath, name: "fake")
            let busy = try await cluster.connect()
            let answer = start(busy, Request(path: "docs/slow", deadline: .seconds(20)))
            let request = try await worker.nextRequest()
            // A second silent client, greeted after the busy one sent its request: once it is
            // closed as idle, the busy one has been silent longer still, and was spared.
            let later = try RawSocket(path: cluster.clientPath)
            guard case .welcome? = try await offPool({ try later.greet() }) else {
                Issue.record("no welcome")
                return
            }
            #expect(try await offPool { try idle.isClosedByPeer() })
            #expect(try await offPool { try later.isClosedByPeer() })
            worker.respond(request.id, "late but welcome")
            #expect(text(await answer.value) == "late but welcome")
            await busy.close()
        }
    }

    @Test("With secrets configured, the Unix sockets ask for them too, and are the owner's alone (0600); the clients' token is no worker's")
    func tokenOnUnixSockets() async throws {
        try await TestCluster.with(fakeWorkerCluster(token: "s3cret", workerToken: "w0rker")) { cluster in
            for path in [cluster.clientPath, cluster.workerPath] {
                var status = stat()
                #expect(stat(path, &status) == 0)
                #expect(status.st_mode & 0o777 == 0o600, "\(path) mode \(String(status.st_mode & 0o777, radix: 8))")
            }
            let anonymous = try RawSocket(path: cluster.clientPath)
            guard case .error(let error)? = try await offPool({ try anonymous.greet() }) else {
                Issue.record("a client without the token was let in")
                return
            }
            #expect(error.code == .unauthorized)
            let rogue = try RawSocket(path: cluster.workerPath)
            let refused = try await offPool { () -> WireMessage? in
                rogue.send(.hello(Hello(role: .worker, kind: "bundle", name: "bundle-1")))
                return try rogue.nextMessage()
            }
            guard case .error(let workerError)? = refused else {
                Issue.record("a worker without the token was let in")
                return
            }
            #expect(workerError.code == .unauthorized)
            // The clients' token does not make a worker (a rogue worker would get other
            // clients' requests, their credentials, and write into the cache).
            let clientAsWorker = try RawSocket(path: cluster.workerPath)
            let alsoRefused = try await offPool { () -> WireMessage? in
                clientAsWorker.send(.hello(Hello(role: .worker, token: "s3cret", kind: "bundle", name: "rogue")))
                return try clientAsWorker.nextMessage()
            }
            guard case .error(let clientTokenError)? = alsoRefused else {
                Issue.record("a worker with the clients' token was let in")
                return
            }
            #expect(clientTokenError.code == .unauthorized)
            // With their secrets, both get in.
            let worker = try await FakeWorker(at: cluster.workerPath, name: "fake", token: "w0rker")
            let client = try await cluster.connect()
            let answer = start(client, Request(path: "docs/a"))
            let request = try await worker.nextRequest()
            worker.respond(request.id, "welcome")
            #expect(text(await answer.value) == "welcome")
            await client.close()
        }
    }
}

@Suite("Hardening: what workers and clients send")
struct InputHardeningTests {
    @Test("Codes survive end to end: a worker's own code reaches the client; limits give requestTooLarge")
    func codesSurvive() async throws {
        try await TestCluster.with(fakeWorkerCluster(limits: ["pathBytes: 100"])) { cluster in
            let worker = try await FakeWorker(at: cluster.workerPath, name: "fake")
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            let answer = start(client, Request(path: "docs/a"))
            let request = try await worker.nextRequest()
            worker.fail(request.id, code: "upstreamMartian", "a code this coordinator does not name")
            guard let error = await answer.value.failure?.chainError else {
                Issue.record("expected a chain error")
                return
            }
            #expect(error.code == .exhausted)
            #expect(error.attempts.first?.code == "upstreamMartian")
            let long = try await perform(client, Request(path: "docs/" + String(repeating: "a", count: 200)))
            #expect(long.failure?.code == .requestTooLarge)
            #expect(long.failure?.message.contains("limits.pathBytes") == true)
        }
    }

    @Test("A 16 MB path is refused with requestTooLarge, and another client is served meanwhile")
    func hugePath() async throws {
        try await TestCluster.with(fakeWorkerCluster()) { cluster in
            let worker = try await FakeWorker(at: cluster.workerPath, name: "fake")
            let attacker = try RawSocket(path: cluster.clientPath)
            guard case .welcome? = try await offPool({ try attacker.greet() }) else {
                Issue.record("no welcome")
                return
            }
            let reply = try await offPool { () -> WireMessage? in
                attacker.send(.request(RequestMessage(id: 1, path: "docs/" + String(repeating: "a", count: 16_000_000))))
                return try attacker.nextMessage()
            }
            guard case .failure(let failure)? = reply else {
                Issue.record("expected a failure, got \(String(describing: reply))")
                return
            }
            #expect(failure.error.code == "requestTooLarge")
            let client = try await cluster.connect()
            let answer = start(client, Request(path: "docs/ok"))
            let request = try await worker.nextRequest()
            worker.respond(request.id, "ok")
            #expect(text(await answer.value) == "ok")
            await client.close()
        }
    }

    @Test("A cancelled request the worker never answers is forgotten after the grace; its late answer is ignored")
    func forgottenRequests() async throws {
        try await TestCluster.with(fakeWorkerCluster()) { cluster in
            let worker = try await FakeWorker(at: cluster.workerPath, name: "fake", capacity: 1)
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            let given = start(client, Request(path: "docs/abandoned", deadline: .milliseconds(300)))
            let request = try await worker.nextRequest()
            #expect(chainCode(await given.value) == .deadlineExceeded)
            guard case .cancel(let cancel)? = try await worker.next() else {
                Issue.record("the worker was not told to stop")
                return
            }
            #expect(cancel.id == request.id)
            // The only slot stays taken while the worker may still answer, then is freed.
            try await eventually("the cancelled request to be forgotten", timeout: 20) {
                try await cluster.status().workers("bundle").first?.inFlight == 0
            }
            worker.respond(request.id, "too late")
            let next = start(client, Request(path: "docs/next"))
            let nextRequest = try await worker.nextRequest()
            worker.respond(nextRequest.id, "next")
            #expect(text(await next.value) == "next", "the worker is still in the pool after its late answer")
        }
    }

    @Test("invalidate refuses a key or prefix over invalidateBytes")
    func invalidateSize() async throws {
        try await TestCluster.with(fakeWorkerCluster(limits: ["invalidateBytes: 64"])) { cluster in
            let client = try await cluster.connect()
            defer { Task { await client.close() } }
            do {
                _ = try await client.invalidate(.prefix(String(repeating: "k", count: 100)))
                Issue.record("a 100-byte prefix was accepted")
            } catch {
                #expect("\(error)".contains("requestTooLarge"), "\(error)")
            }
        }
    }
}

@Suite("Hardening: clients that do not read")
struct SlowReaderTests {
    /// The coordinator's peak resident memory so far, in bytes (VmHWM).
    /// A bundle-only cluster whose clients have a queue of 4 MB for frames of at most 2 MB.
    func smallQueueCluster(extraLimits: [String] = []) -> ClusterOptions {
        var options = ClusterOptions()
        options.custom = """
            domains:
              static: [bundle]
            routes:
              - match: "docs/..."
                domain: static
            workers:
              bundle: {count: 1, root: $FOLDER/Bundle}
            limits:
              maxFrame: 2MB
              clientQueue: 4MB

            """ + extraLimits.map { "  \($0)\n" }.joined()
        return options
    }

    func peakMemory(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { throw SpawnError("no VmHWM in /proc/\(pid)/status") }
        return kilobytes * 1024
    }

    @Test("A client that never reads holds no more than its queue of answers, and is closed after idleTimeout; others are served")
    func slowReaderIsClosed() async throws {
        try await TestCluster.with(smallQueueCluster(extraLimits: ["idleTimeout: 4s"])) { cluster in
            try cluster.folder.write("Bundle/docs/big.bin", [UInt8](repeating: 0x5A, count: 600_000))
            let hoarder = try RawSocket(path: cluster.clientPath)
            guard case .welcome? = try await offPool({ try hoarder.greet() }) else {
                Issue.record("no welcome")
                return
            }
            // 200 answers of 800 KB (base64) each: 160 MB if the coordinator kept them all.
            var requests: [UInt8] = []
            for id in 1...200 {
                requests += try MessageCodec().encodeFrame(.request(RequestMessage(id: MessageID(id), path: "docs/big.bin")))
            }
            #expect(hoarder.write(requests))
            try await eventually("the hoarder to be closed", timeout: 60) {
                try await cluster.status().counter("slowReadersClosed") == 1
            }
            let client = try await cluster.connect()
            let answer = try await perform(client, Request(path: "docs/hello.txt"))
            #expect(answer.success.map { String(decoding: $0.body, as: UTF8.self) } == "Hello, Monarch!\n")
            await client.close()
            let peak = try peakMemory(of: cluster.up.pid)
            #expect(peak < 100 << 20, "coordinator peak RSS \(peak >> 20) MB")
        }
    }
}

extension SlowReaderTests {
    @Test("A client that pipelines many large reads and takes its answers gets every one, never cut off")
    func pipeliningReaderGetsEverything() async throws {
        try await TestCluster.with(smallQueueCluster()) { cluster in
            let body = [UInt8](repeating: 0x41, count: 600_000)
            try cluster.folder.write("Bundle/docs/big.bin", body)
            let client = try await cluster.connect()
            // 60 answers of 800 KB at once: 48 MB, twelve times the client's queue.
            let tasks = (0..<60).map { _ in start(client, Request(path: "docs/big.bin", deadline: .seconds(60))) }
            var right = 0
            for task in tasks { if let response = await task.value.success, Array(response.body) == body { right += 1 } }
            #expect(right == 60)
            #expect(try await cluster.status(via: client).counter("slowReadersClosed") == 0)
            await client.close()
        }
    }
}
