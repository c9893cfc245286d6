import Foundation
import Monarch
import MonarchLoop
import MonarchTransport
import MonarchWire
import MonarchWorker
import Synchronization
import Testing

/// Answers `bytes/N` with a 200 whose body is N bytes of `a`; anything else is a miss.
private struct SizedBodies: RequestProvider {
    var name: String { "sized" }

    func perform(_ request: Request) async -> ProviderOutcome {
        guard request.path.hasPrefix("bytes/"), let count = Int(request.path.dropFirst("bytes/".count)) else {
            return .miss(reason: "no such size")
        }
        return .response(Response(body: Data(repeating: UInt8(ascii: "a"), count: count)))
    }
}

/// A real ``WorkerRuntime`` over a Unix socket, with the test playing the coordinator: every
/// answer keeps to the frame limit the welcome announced, and one that does not fit becomes a
/// `responseTooLarge` failure instead of silence.
@Suite struct WorkerAnswerLimitTests {
    /// The limit a small welcome announces applies to what the worker sends: the answer that
    /// fits goes out, the one that does not is a `responseTooLarge` failure naming its size and
    /// the limit, counted; the limits reach the provider's hook before any request.
    @Test(.timeLimit(.minutes(1)))
    func anAnswerOverTheAnnouncedFrameLimitIsAResponseTooLargeFailure() async throws {
        try await withCacheFixture { fixture in
            let adopted = Mutex<[AnswerLimits]>([])
            let runtime = WorkerRuntime(
                identity: WorkerIdentity(kind: "sized", name: "sized-1"), provider: SizedBodies(), loop: fixture.loop,
                logger: fixture.logs.logger
            ) { limits in adopted.withLock { $0.append(limits) } }
            let coordinator = try await TestCoordinator.connect(runtime, fixture, welcome: Welcome(maxFrameBytes: 4096))
            let worker = coordinator.worker

            try await worker.send(.request(RequestMessage(id: 1, path: "bytes/1000")))
            let first = try await worker.nextMessage()
            guard case .response(let small)? = first else {
                Issue.record("expected the small response, got \(String(describing: first))")
                return
            }
            #expect(small.id == 1)
            #expect(small.body?.count == 1000)
            #expect(adopted.withLock { $0 } == [AnswerLimits(maxFrameBytes: 4096)])
            #expect(runtime.limits.maxFrameBytes == 4096)

            // 3100 bytes are 4136 in base64: over 4096.
            try await worker.send(.request(RequestMessage(id: 2, path: "bytes/3100")))
            let second = try await worker.nextMessage()
            guard case .failure(let failure)? = second else {
                Issue.record("expected a failure instead of the oversized response, got \(String(describing: second))")
                return
            }
            #expect(failure.id == 2)
            #expect(failure.error.code == "responseTooLarge")
            #expect(failure.error.message.contains("4096"), "\(failure.error.message)")
            let oversized = ProviderOutcome.response(Response(body: Data(repeating: UInt8(ascii: "a"), count: 3100)))
                .message(id: 2, source: "sized")
            let size = MessageCodec().encode(oversized).count
            #expect(size > 4096)
            #expect(failure.error.message.contains("the response answering 2 is \(size) bytes"), "\(failure.error.message)")
            #expect(failure.error.attempts?.first?.provider == "sized")
            #expect(failure.error.attempts?.first?.code == "responseTooLarge")

            try await worker.send(.status(StatusMessage(id: 3)))
            guard case .result(let status)? = try await worker.nextMessage() else {
                Issue.record("expected the status result")
                return
            }
            #expect(status.data?["tooLarge"] == .integer(1))
            #expect(status.data?["responses"] == .integer(1))
            #expect(status.data?["failures"] == .integer(1))
            #expect(status.data?["unsent"] == .integer(0))
            #expect(fixture.logs.messages(at: .warning).contains { $0.contains("responseTooLarge") })
            try await coordinator.finish()
        }
    }

    /// With no `maxFrameBytes` in the welcome, the limit is the protocol's 16 MiB: a body of
    /// 13 MiB (over 17 MiB in base64) is refused the same way, not dropped.
    @Test(.timeLimit(.minutes(1)))
    func withoutAnAnnouncedLimitTheProtocolDefaultApplies() async throws {
        try await withCacheFixture { fixture in
            let runtime = WorkerRuntime(
                identity: WorkerIdentity(kind: "sized"), provider: SizedBodies(), loop: fixture.loop,
                logger: fixture.logs.logger)
            let coordinator = try await TestCoordinator.connect(runtime, fixture, welcome: Welcome())
            let worker = coordinator.worker
            #expect(runtime.limits == AnswerLimits.protocolDefault)
            try await worker.send(.request(RequestMessage(id: 7, path: "bytes/\(13 << 20)")))
            guard case .failure(let failure)? = try await worker.nextMessage() else {
                Issue.record("expected a failure instead of the oversized response")
                return
            }
            #expect(failure.id == 7)
            #expect(failure.error.code == "responseTooLarge")
            #expect(failure.error.message.contains("\(FrameDecoder.defaultMaxFrameBytes)"), "\(failure.error.message)")
            // The largest body the default frame carries still goes through.
            let largest = AnswerLimits.protocolDefault.maxBodyBytes
            try await worker.send(.request(RequestMessage(id: 8, path: "bytes/\(largest)")))
            guard case .response(let response)? = try await worker.nextMessage() else {
                Issue.record("expected the largest body that fits")
                return
            }
            #expect(response.body?.count == largest)
            #expect(runtime.counters.tooLarge == 1)
            try await coordinator.finish()
        }
    }

    /// When not even the `responseTooLarge` failure fits, nothing can be sent: the worker logs
    /// it at error level and counts it, and the connection goes on serving.
    @Test(.timeLimit(.minutes(1)))
    func anAnswerThatCannotBeSentAtAllIsLoggedAtErrorLevel() async throws {
        try await withCacheFixture { fixture in
            let runtime = WorkerRuntime(
                identity: WorkerIdentity(kind: "sized"), provider: SizedBodies(), loop: fixture.loop,
                logger: fixture.logs.logger)
            let coordinator = try await TestCoordinator.connect(runtime, fixture, welcome: Welcome(maxFrameBytes: 64))
            try await coordinator.worker.send(.request(RequestMessage(id: 1, path: "bytes/100")))
            try await waitUntil { runtime.counters.unsent == 1 }
            let errors = fixture.logs.messages(at: .error)
            #expect(errors.contains { $0.contains("answering 1") && $0.contains("64 bytes") }, "\(errors)")
            #expect(runtime.counters.tooLarge == 1)
            // A pong fits in 64 bytes: the connection still works.
            try await coordinator.worker.send(.ping(PingMessage(id: 2)))
            #expect(try await coordinator.worker.nextMessage() == .pong(PongMessage(id: 2)))
            try await coordinator.finish()
        }
    }

    @Test func theBodyLimitLeavesRoomForBase64AndTheEnvelope() {
        #expect(AnswerLimits.protocolDefault.maxFrameBytes == 16 << 20)
        #expect(AnswerLimits.protocolDefault.maxBodyBytes == 12_533_760)
        for frame in [16 << 20, 65_540, 65_543, 100_000, 1 << 30] {
            let body = AnswerLimits.largestBody(fitting: frame)
            let base64 = { (bytes: Int) in 4 * ((bytes + 2) / 3) }
            #expect(base64(body) + AnswerLimits.envelopeReserve <= frame)
            #expect(base64(body + 1) + AnswerLimits.envelopeReserve > frame)
        }
        #expect(AnswerLimits.largestBody(fitting: 4096) == 0)
        #expect(AnswerLimits(maxFrameBytes: 0).maxFrameBytes == 1)
        #expect(AnswerLimits(welcome: Welcome(maxFrameBytes: 1 << 20)).maxFrameBytes == 1 << 20)
    }
}
