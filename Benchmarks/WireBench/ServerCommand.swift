import ArgumentParser
import Foundation
import MonarchLoop
import MonarchTransport
import MonarchWire

/// Echoes every frame back on the loop thread, through the layer's loop-level API.
struct ServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server", abstract: "Echo every frame back (prints 'listening' when ready; stops on SIGINT/SIGTERM).")

    @Argument(help: "unix:PATH or tcp:HOST:PORT")
    var address: String

    func run() async throws {
        let address = try SocketAddress(parsing: address)
        let loop = try EventLoop(name: "echo-server")
        let stopped = AsyncStream.makeStream(of: Void.self)
        try await loop.submit {
            let connections = LoopBound<[ObjectIdentifier: FrameConnection]>([:], loop: loop)
            let listener = try Listener(address: address, on: loop) { stream in
                let connection = FrameConnection(stream: stream)
                connection.onFrame = { frame in try? connection.send(payload: frame) }
                connection.onEnd = { _ in connections.value[ObjectIdentifier(connection)] = nil }
                connections.value[ObjectIdentifier(connection)] = connection
                connection.start()
            }
            let signals = LoopBound([LoopSignal](), loop: loop)
            let stop: @Sendable () -> Void = {
                listener.close()
                for connection in connections.value.values { connection.close() }
                for signal in signals.value { signal.close() }
                stopped.continuation.finish()
            }
            signals.value = [try LoopSignal(SIGINT, on: loop, action: stop), try LoopSignal(SIGTERM, on: loop, action: stop)]
        }
        FileHandle.standardOutput.write(Data("listening\n".utf8))
        for await _ in stopped.stream {}
        let report = loop.shutdown()
        if report.handlesLeftOpen > 0 || !report.loopClosed {
            FileHandle.standardError.write(Data("echo server: unclean shutdown \(report)\n".utf8))
            throw ExitCode(3)
        }
    }
}
