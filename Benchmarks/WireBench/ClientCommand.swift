import ArgumentParser
import Foundation
import MonarchLoop
import MonarchTransport
import MonarchWire

/// Keeps N frames in flight against an echo server and counts round trips per second.
struct ClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client", abstract: "Keep N frames in flight against an echo server; print one JSON line of figures.")

    enum Mode: String, ExpressibleByArgument, CaseIterable {
        /// Callbacks on the loop thread: how the coordinator and the workers use the layer.
        case loop
        /// `AsyncFrameConnection` from a task on Swift's default executor: how a client library caller uses it.
        case async
        /// `AsyncFrameConnection` from a task that prefers the loop as its executor: async code with no thread hop.
        case asyncOnLoop = "async-on-loop"
    }

    @Argument(help: "unix:PATH or tcp:HOST:PORT")
    var address: String
    @Option(help: "Frames kept in flight.") var inflight = 1
    @Option(help: "Seconds measured.") var seconds = 3.0
    @Option(help: "Payload bytes per frame.") var payload = 1024
    @Option(help: "Seconds of warm-up before measuring.") var warmup = 0.5
    @Option(help: "loop or async.") var mode = Mode.loop

    func run() async throws {
        let address = try SocketAddress(parsing: address)
        let loop = try EventLoop(name: "bench-client")
        let frame = benchPayload(size: payload)
        let (roundTrips, elapsed): (Int, Double)
        switch mode {
        case .loop:
            (roundTrips, elapsed) = try await LoopClient.run(
                address: address, loop: loop, frame: frame, inflight: inflight, warmup: warmup, seconds: seconds)
        case .async:
            (roundTrips, elapsed) = try await AsyncClient.run(
                address: address, loop: loop, frame: frame, inflight: inflight, warmup: warmup, seconds: seconds)
        case .asyncOnLoop:
            (roundTrips, elapsed) = try await Task(executorPreference: loop) {
                try await AsyncClient.run(
                    address: address, loop: loop, frame: frame, inflight: inflight, warmup: warmup, seconds: seconds)
            }.value
        }
        loop.shutdown()
        let transport = if case .tcp = address { "tcp" } else { "unix" }
        let result = BenchResult(
            impl: mode == .loop ? "swift" : "swift-\(mode.rawValue)", transport: transport, inflight: inflight,
            payload: frame.count, roundTrips: roundTrips, seconds: elapsed, perSecond: Double(roundTrips) / elapsed)
        print(result.line())
    }
}

/// The client on the loop thread: each reply sends the next frame from the read callback.
enum LoopClient {
    static func run(
        address: SocketAddress, loop: EventLoop, frame: [UInt8], inflight: Int, warmup: Double, seconds: Double
    ) async throws -> (Int, Double) {
        let stream = try await StreamConnection.connect(to: address, on: loop)
        return try await withCheckedThrowingContinuation { continuation in
            loop.execute {
                let connection = FrameConnection(stream: stream)
                // The run's state, on the loop's thread (the timer's callbacks are @Sendable).
                struct Tally {
                    var counting = false
                    var count = 0
                    var started = ContinuousClock.now
                    var finished = false
                }
                let tally = LoopBound(Tally(), loop: loop)
                connection.onFrame = { reply in
                    guard reply.count == frame.count else {
                        tally.value.finished = true
                        connection.close()
                        continuation.resume(throwing: ValidationError("reply of \(reply.count) bytes, sent \(frame.count)"))
                        return
                    }
                    if tally.value.counting { tally.value.count += 1 }
                    try? connection.send(payload: frame)
                }
                connection.onEnd = { end in
                    guard !tally.value.finished else { return }
                    tally.value.finished = true
                    continuation.resume(throwing: ValidationError("connection ended early: \(end)"))
                }
                let timer: LoopTimer
                do {
                    timer = try LoopTimer(on: loop)
                } catch {
                    connection.close()
                    continuation.resume(throwing: error)
                    return
                }
                timer.start(afterMs: UInt64(warmup * 1000)) {
                    tally.value.counting = true
                    tally.value.started = .now
                    timer.start(afterMs: UInt64(seconds * 1000)) {
                        let elapsed = tally.value.started.duration(to: .now)
                        tally.value.counting = false
                        tally.value.finished = true
                        timer.close()
                        connection.close()
                        continuation.resume(returning: (tally.value.count, elapsed.seconds))
                    }
                }
                connection.start()
                for _ in 0..<inflight { try? connection.send(payload: frame) }
            }
        }
    }
}

/// The client in async code: a task awaits each reply and sends the next frame.
enum AsyncClient {
    static func run(
        address: SocketAddress, loop: EventLoop, frame: [UInt8], inflight: Int, warmup: Double, seconds: Double
    ) async throws -> (Int, Double) {
        let connection = try await AsyncFrameConnection.connect(to: address, on: loop)
        for _ in 0..<inflight { try await connection.send(payload: frame) }
        let clock = ContinuousClock()
        let warmupEnd = clock.now + .milliseconds(Int(warmup * 1000))
        var start = warmupEnd
        var end = warmupEnd + .milliseconds(Int(seconds * 1000))
        var count = 0
        var measuring = false
        while let reply = try await connection.nextFrame() {
            guard reply.count == frame.count else { throw ValidationError("reply of \(reply.count) bytes, sent \(frame.count)") }
            let now = clock.now
            if !measuring && now >= warmupEnd {
                measuring = true
                start = now
                end = now + .milliseconds(Int(seconds * 1000))
            }
            if measuring {
                if now >= end { break }
                count += 1
            }
            try await connection.send(payload: frame)
        }
        let elapsed = start.duration(to: clock.now)
        await connection.close()
        return (count, elapsed.seconds)
    }
}

extension Duration {
    /// The duration in seconds, with its fraction.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
