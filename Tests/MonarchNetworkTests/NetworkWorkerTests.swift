import Foundation
import Monarch
import MonarchLoop
import MonarchNetwork
import MonarchTransport
import MonarchWire
import MonarchWorker
import TestWorkerHarness
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The network provider behind a real ``WorkerRuntime``, with the test playing the coordinator
/// over a Unix socket: an upstream body just over what the announced frame carries is a
/// `responseTooLarge` failure, whether the upstream announces its length or not.
@Suite struct NetworkWorkerTests {
    /// One worker connection: the runtime serving `provider` (its body limit wired to the
    /// welcome as the worker executable wires it), and the coordinator's end.
    private struct Session {
        let worker: AsyncFrameConnection
        let serving: Task<Void, any Error>
        let played: PlayedCoordinator
        let folder: String

        static func start(_ provider: NetworkProvider, on loop: EventLoop, welcome: Welcome) async throws -> Session {
            var template = Array("/tmp/monarch-network-worker-XXXXXX".utf8CString)
            guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
                throw Unexpected("mkdtemp failed")
            }
            let folder = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            let played = try await PlayedCoordinator(in: folder, on: loop)
            let runtime = WorkerRuntime(
                identity: WorkerIdentity(kind: "network"), provider: provider, loop: loop,
                logger: .init(label: "network-test")
            ) { limits in provider.limitBodies(toFitFrameBodiesOf: limits.maxBodyBytes) }
            let serving = Task { try await runtime.run(coordinator: played.address) }
            let (worker, _) = try await played.welcomeNextWorker(welcome)
            return Session(worker: worker, serving: serving, played: played, folder: folder)
        }

        /// Asks for `upstream` and returns the answer.
        func fetch(_ upstream: String, id: MessageID) async throws -> WireMessage? {
            try await worker.send(.request(RequestMessage(id: id, path: "big", upstream: upstream)))
            return try await worker.nextMessage()
        }

        func finish() async throws {
            await worker.close()
            try await serving.value
            await played.close()
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    private struct Unexpected: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Frames of 64 KiB + 4000 bytes carry bodies of 3000 bytes: 3000 bytes from the upstream
    /// are answered, 3001 are `responseTooLarge` from the network provider itself, though the
    /// configured `--max-response-bytes` is far larger.
    @Test(.timeLimit(.minutes(1)), arguments: [true, false])
    func anUpstreamBodyJustOverWhatTheAnnouncedFrameCarriesIsResponseTooLarge(withContentLength: Bool) async throws {
        try await withHarness { harness in
            let provider = harness.provider(maxResponseBytes: 64 << 20)
            let session = try await Session.start(
                provider, on: harness.loop, welcome: Welcome(maxFrameBytes: AnswerLimits.envelopeReserve + 4000))
            let length = withContentLength ? 1 : 0

            let fits = try await session.fetch(harness.origin.url("/big?bytes=3000&length=\(length)"), id: 1)
            guard case .response(let response)? = fits else {
                Issue.record("expected the body that fits, got \(String(describing: fits))")
                return
            }
            #expect(response.body?.count == 3000)
            // The welcome reached the provider before the first request was served.
            #expect(provider.effectiveMaxResponseBytes == 3000)
            let over = try await session.fetch(harness.origin.url("/big?bytes=3001&length=\(length)"), id: 2)
            guard case .failure(let failure)? = over else {
                Issue.record("expected a failure, got \(String(describing: over))")
                return
            }
            #expect(failure.id == 2)
            #expect(failure.error.code == "responseTooLarge")
            #expect(failure.error.message.contains("3000"), "\(failure.error.message)")
            #expect(failure.error.message.contains("the largest body a frame to the coordinator carries"), "\(failure.error.message)")
            try await session.finish()
        }
    }

    /// The runtime answers the network provider's requests from callbacks on the loop, with no
    /// task each: a `cancel` still ends a slow fetch at once with a `cancelled` failure, and the
    /// requests after it are answered as before.
    @Test(.timeLimit(.minutes(1)))
    func aCancelEndsAFetchAnsweredWithNoTask() async throws {
        try await withHarness { harness in
            let session = try await Session.start(harness.provider(), on: harness.loop, welcome: Welcome())
            try await session.worker.send(.request(RequestMessage(
                id: 7, path: "slow", upstream: harness.origin.url("/slow?ms=120000&name=worker-cancel"))))
            try await harness.waitForHit("/slow")
            let cancelledAt = ContinuousClock.now
            try await session.worker.send(.cancel(CancelMessage(id: 7)))
            let answer = try await session.worker.nextMessage()
            guard case .failure(let failure)? = answer else {
                Issue.record("expected a failure, got \(String(describing: answer))")
                return
            }
            #expect(failure.id == 7)
            #expect(failure.error.code == "cancelled")
            // Far sooner than the origin's answer would come, even on a loaded machine.
            #expect(ContinuousClock.now - cancelledAt < .seconds(60))
            let next = try await session.fetch(harness.origin.url("/json"), id: 8)
            guard case .response(let response)? = next else {
                Issue.record("expected a response, got \(String(describing: next))")
                return
            }
            #expect(response.id == 8)
            #expect(response.status == 200)
            try await session.finish()
        }
    }

    /// With the defaults — no `maxFrameBytes` in the welcome, the default limit — the largest
    /// body accepted fits the protocol's 16 MiB frame, and one byte more is refused.
    @Test(.timeLimit(.minutes(1)))
    func theDefaultResponseLimitFitsTheDefaultFrame() async throws {
        #expect(NetworkConfiguration.defaultMaxResponseBytes == AnswerLimits.protocolDefault.maxBodyBytes)
        try await withHarness { harness in
            let largest = NetworkConfiguration.defaultMaxResponseBytes
            let provider = harness.provider()
            #expect(provider.configuration.maxResponseBytes == largest)
            let session = try await Session.start(provider, on: harness.loop, welcome: Welcome())

            let fits = try await session.fetch(harness.origin.url("/big?bytes=\(largest)&length=1"), id: 1)
            guard case .response(let response)? = fits else {
                Issue.record("expected the largest body, got \(String(describing: fits).prefix(300))")
                return
            }
            #expect(response.body?.count == largest)
            let over = try await session.fetch(harness.origin.url("/big?bytes=\(largest + 1)&length=0"), id: 2)
            guard case .failure(let failure)? = over else {
                Issue.record("expected a failure, got \(String(describing: over).prefix(300))")
                return
            }
            #expect(failure.error.code == "responseTooLarge")
            #expect(failure.error.message.contains("\(largest)"), "\(failure.error.message)")
            try await session.finish()
        }
    }
}
