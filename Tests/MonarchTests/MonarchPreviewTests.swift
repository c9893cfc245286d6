import Foundation
import Glibc
import Monarch
import Synchronization
import Testing

/// ``MonarchPreview`` reads its fixture files off Swift's cooperative pool.
@Suite(.timeLimit(.minutes(2))) struct MonarchPreviewTests {
    /// What the writer thread saw.
    private final class Probe: Sendable {
        /// Set by a task started while a fixture read was stuck.
        let ran = Atomic<Bool>(false)
        /// Whether that task had run before the stuck reads were let go.
        let ranWhileReadsWaited = Atomic<Bool>(false)
    }

    @Test("While fixture reads wait on the file system (FIFOs with no writer yet), as many as the pool has threads, other tasks run")
    func stuckReadsLeaveThePoolFree() async throws {
        let folder = FileManager.default.temporaryDirectory.path + "/monarch-preview-fifo-\(UInt32.random(in: 0 ... .max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // At least as many stuck reads as the pool has threads: a read that blocked its thread
        // would leave no thread for the probe.
        let count = max(2, ProcessInfo.processInfo.activeProcessorCount)
        let paths = (0..<count).map { "\(folder)/f\($0)" }
        for path in paths { #expect(mkfifo(path, 0o600) == 0) }

        let probe = Probe()
        // The writer is a thread of its own, not a task: it must run however the pool fares.
        Thread.detachNewThread {
            var opened: [Int: Int32] = [:]
            func openReady() {
                for (index, path) in paths.enumerated() where opened[index] == nil {
                    // Succeeds only once a reader has the FIFO open (ENXIO before).
                    let descriptor = open(path, O_WRONLY | O_NONBLOCK)
                    if descriptor >= 0 { opened[index] = descriptor }
                }
            }
            while opened.isEmpty {
                openReady()
                usleep(1000)
            }
            // A read is stuck now. A task started now must run while it waits.
            Task { probe.ran.store(true, ordering: .releasing) }
            for _ in 0..<30_000 where !probe.ran.load(ordering: .acquiring) { usleep(1000) }
            probe.ranWhileReadsWaited.store(probe.ran.load(ordering: .acquiring), ordering: .releasing)
            // Let every read go: each FIFO gets its name as content, then its end.
            var written = Set<Int>()
            while written.count < count {
                openReady()
                for (index, descriptor) in opened where !written.contains(index) {
                    let text = Array("fixture \(index)".utf8)
                    _ = text.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                    close(descriptor)
                    written.insert(index)
                }
                usleep(1000)
            }
        }

        let preview = MonarchPreview(fixtures: folder)
        let bodies = try await withThrowingTaskGroup(of: (Int, Data).self) { group in
            for index in 0..<count {
                group.addTask { (index, try await preview.perform(Request(path: "f\(index)")).body) }
            }
            var bodies: [Int: Data] = [:]
            for try await (index, body) in group { bodies[index] = body }
            return bodies
        }
        let ranWhileReadsWaited = probe.ranWhileReadsWaited.load(ordering: .acquiring)
        #expect(ranWhileReadsWaited, "a task waited for the fixture reads to end")
        for index in 0..<count {
            #expect(bodies[index] == Data("fixture \(index)".utf8))
        }
    }
}
