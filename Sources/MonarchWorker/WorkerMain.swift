import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import Logging
import MonarchLoop
import MonarchWire

/// What every worker executable's `main` does once its provider is ready.
public enum WorkerMain {
    /// Serves `runtime` until the coordinator closes the connection; SIGTERM and SIGINT drain
    /// it first.
    ///
    /// - Throws: `ExitCode.failure` (after logging why) when the coordinator cannot be reached
    ///   or the connection fails.
    public static func serve(_ runtime: WorkerRuntime, coordinator address: SocketAddress, logger: Logger) async throws {
        let signals: [LoopSignal] = try await runtime.loop.submit {
            try [SIGTERM, SIGINT].map { number in
                try LoopSignal(number, on: runtime.loop) {
                    logger.info("stopping: finishing the requests in flight")
                    Task { await runtime.drain() }
                }
            }
        }
        defer { runtime.loop.execute { for signal in signals { signal.close() } } }
        do {
            // Read on the worker's loop: each request then starts where it arrived, with no
            // hop through another thread.
            try await withTaskExecutorPreference(runtime.loop) { try await runtime.run(coordinator: address) }
            logger.info("the coordinator closed the connection; exiting")
        } catch {
            logger.critical("\(error)")
            throw ExitCode.failure
        }
    }
}
