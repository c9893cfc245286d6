import Foundation
import Monarch
import MonarchBundle
import MonarchLoop
import MonarchTransport
import MonarchWire
import MonarchWorker
import TestOrigins
import TestWorkerHarness
import Testing

extension PlayedCoordinator {
    /// The next worker to dial in, once it said hello (of kind `bundle`) and got `welcome`.
    func accept(_ welcome: Welcome) async throws -> AsyncFrameConnection {
        let (worker, hello) = try await welcomeNextWorker(welcome)
        #expect(hello.kind == "bundle")
        return worker
    }

    /// The next worker to dial in, once it said hello and got `refusal`; the connection is
    /// left open.
    func refuse(_ refusal: ErrorMessage) async throws -> AsyncFrameConnection {
        let (worker, _) = try await nextWorker()
        try await worker.send(.error(refusal))
        return worker
    }
}

/// Sends a GET for `path` and returns the answer.
private func get(_ path: String, id: MessageID, on worker: AsyncFrameConnection) async throws -> WireMessage? {
    try await worker.send(.request(RequestMessage(id: id, path: path)))
    return try await worker.nextMessage()
}

/// The bundle provider behind a real ``WorkerRuntime``: the file size limit follows the frame
/// the coordinator announced, and a file over it is a `responseTooLarge` failure, not an
/// answer that cannot be sent.
@Suite struct BundleWorkerTests {
    /// Frames of 64 KiB + 4000 bytes carry bodies of 3000 bytes: a file of 3000 bytes is
    /// served, one of 3001 is `responseTooLarge` from the bundle itself, before it is read.
    @Test(.timeLimit(.minutes(1)))
    func aFileJustOverWhatTheAnnouncedFrameCarriesIsResponseTooLarge() async throws {
        try await withFixture { fixture in
            try fixture.write("bundle/fits.bin", [UInt8](repeating: 1, count: 3000))
            try fixture.write("bundle/over.bin", [UInt8](repeating: 1, count: 3001))
            let store = try await fixture.store()
            let runtime = WorkerRuntime(
                identity: WorkerIdentity(kind: "bundle"), provider: BundleProvider(store: store), loop: fixture.loop,
                logger: .init(label: "bundle-test")
            ) { limits in store.limitBodies(toFitFrameBodiesOf: limits.maxBodyBytes) }
            let coordinator = try await PlayedCoordinator(in: fixture.base, on: fixture.loop)
            let serving = Task { try await runtime.run(coordinator: coordinator.address) }
            let worker = try await coordinator.accept(Welcome(maxFrameBytes: AnswerLimits.envelopeReserve + 4000))

            guard case .response(let response)? = try await get("fits.bin", id: 1, on: worker) else {
                Issue.record("expected the file that fits")
                return
            }
            #expect(response.body?.count == 3000)
            #expect(store.effectiveMaxFileBytes == 3000)
            guard case .failure(let failure)? = try await get("over.bin", id: 2, on: worker) else {
                Issue.record("expected a failure")
                return
            }
            #expect(failure.id == 2)
            #expect(failure.error.code == "responseTooLarge")
            #expect(
                failure.error.message
                    == "over.bin is 3001 bytes, more than the 3000 bytes served (the largest body a frame to the coordinator carries)")
            #expect(runtime.counters.tooLarge == 0, "the bundle refused it, not the runtime")

            await worker.close()
            try await serving.value
            await coordinator.close()
        }
    }

    /// A worker the coordinator refuses — an `error` answering its hello, the connection left
    /// open — stops with the refusal and closes its connection: its loop shuts down with no
    /// handle left open.
    @Test(.timeLimit(.minutes(1)))
    func aRefusedWorkerClosesItsConnection() async throws {
        try await withFixture { fixture in
            let store = try await fixture.store()
            let runtime = WorkerRuntime(
                identity: WorkerIdentity(kind: "bundle"), provider: BundleProvider(store: store), loop: fixture.loop,
                logger: .init(label: "bundle-test"))
            let coordinator = try await PlayedCoordinator(in: fixture.base, on: fixture.loop)
            let serving = Task { try await runtime.run(coordinator: coordinator.address) }
            let worker = try await coordinator.refuse(ErrorMessage(code: .unauthorized, message: "no such secret"))
            await #expect(throws: WorkerError.self) { try await serving.value }
            // The worker's end closed: what the coordinator reads next is the end of the stream.
            #expect(try await worker.nextMessage() == nil)
            await worker.close()
            await coordinator.close()
        }
    }

    /// With the defaults — no `maxFrameBytes` in the welcome, the default file limit — the
    /// largest file served fits the protocol's 16 MiB frame, and one byte more is refused.
    @Test(.timeLimit(.minutes(1)))
    func theDefaultFileLimitFitsTheDefaultFrame() async throws {
        try await withFixture { fixture in
            let largest = BundleStore.defaultMaxFileBytes
            try fixture.write("bundle/largest.bin", [UInt8](repeating: 2, count: largest))
            try fixture.write("bundle/over.bin", [UInt8](repeating: 2, count: largest + 1))
            let store = try await fixture.store()
            let runtime = WorkerRuntime(
                identity: WorkerIdentity(kind: "bundle"), provider: BundleProvider(store: store), loop: fixture.loop,
                logger: .init(label: "bundle-test")
            ) { limits in store.limitBodies(toFitFrameBodiesOf: limits.maxBodyBytes) }
            let coordinator = try await PlayedCoordinator(in: fixture.base, on: fixture.loop)
            let serving = Task { try await runtime.run(coordinator: coordinator.address) }
            let worker = try await coordinator.accept(Welcome())

            guard case .response(let response)? = try await get("largest.bin", id: 1, on: worker) else {
                Issue.record("expected the largest file")
                return
            }
            #expect(response.body?.count == largest)
            guard case .failure(let failure)? = try await get("over.bin", id: 2, on: worker) else {
                Issue.record("expected a failure")
                return
            }
            #expect(failure.error.code == "responseTooLarge")
            #expect(failure.error.message.contains("\(largest + 1) bytes, more than the \(largest) bytes served"))

            await worker.close()
            try await serving.value
            await coordinator.close()
        }
    }

    /// The executable: `--max-file-bytes` and the welcome's frame, and `--serve-dotfiles`.
    @Test(.timeLimit(.minutes(1)), arguments: [false, true])
    func theWorkerExecutableCapsFilesAndHidesDotfiles(serveDotfiles: Bool) async throws {
        let executable = ProcessSetup.executableDirectory + "/monarch-bundle-worker"
        try #require(FileManager.default.isExecutableFile(atPath: executable), "build the worker first: \(executable)")
        try await withFixture { fixture in
            try fixture.write("bundle/.env", "API_KEY=secret")
            try fixture.write("bundle/fits.bin", [UInt8](repeating: 1, count: 3000))
            try fixture.write("bundle/over.bin", [UInt8](repeating: 1, count: 3001))
            let coordinator = try await PlayedCoordinator(in: fixture.base, on: fixture.loop)
            let process = try SpawnedProcess(
                executable: executable,
                arguments: ["--coordinator", "\(coordinator.address)", "--root", fixture.bundle, "--log-level", "error"]
                    + (serveDotfiles ? ["--serve-dotfiles"] : [])
            )
            defer { process.signal(SIGTERM) }
            let worker = try await coordinator.accept(Welcome(maxFrameBytes: AnswerLimits.envelopeReserve + 4000))

            guard case .response(let fits)? = try await get("fits.bin", id: 1, on: worker) else {
                Issue.record("expected the file that fits")
                return
            }
            #expect(fits.body?.count == 3000)
            guard case .failure(let over)? = try await get("over.bin", id: 2, on: worker) else {
                Issue.record("expected a failure")
                return
            }
            #expect(over.error.code == "responseTooLarge")
            let dotfile = try await get(".env", id: 3, on: worker)
            if serveDotfiles {
                guard case .response(let env)? = dotfile else {
                    Issue.record("expected .env, got \(String(describing: dotfile))")
                    return
                }
                #expect(env.body == Data("API_KEY=secret".utf8))
            } else {
                #expect(dotfile == .miss(MissMessage(id: 3, source: "bundle", reason: ".env is not in the bundle")))
            }

            // The worker exits once the coordinator closes the connection.
            await worker.close()
            let exit = try await process.waitForExit(timeout: .seconds(20))
            #expect(exit != nil)
            #expect(exit == .exited(0))
            await coordinator.close()
        }
    }
}
