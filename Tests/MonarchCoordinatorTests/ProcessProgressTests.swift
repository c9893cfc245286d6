#if canImport(Glibc)
import Glibc
#endif
import Testing

@testable import MonarchCoordinator

@Suite struct ProcessProgressTests {
    @Test func theStateAndCPUTimeAreReadPastACommandNameWithSpacesAndParentheses() {
        let line = "4242 (monarch (bundle) 1) R 1 4242 4242 0 -1 4194560 100 0 0 0 37 5 0 0 20 0 3 0 100 0 0"
        #expect(ProcessProgress.parse(ArraySlice(line.utf8)) == ProcessProgress(state: "R", cpuTicks: 42))
        #expect(ProcessProgress.parse(ArraySlice("garbage".utf8)) == nil)
    }

    @Test func aRunnableProcessUsingCPUIsBusyAStoppedOneIsNot() {
        let before = ProcessProgress(state: "S", cpuTicks: 10)
        #expect(ProcessProgress(state: "R", cpuTicks: 12).isBusy(since: before))
        #expect(ProcessProgress(state: "S", cpuTicks: 11).isBusy(since: before))
        #expect(ProcessProgress(state: "R", cpuTicks: 10).isBusy(since: before), "runnable, waiting for a CPU: starved, not dead")
        #expect(!ProcessProgress(state: "S", cpuTicks: 10).isBusy(since: before), "asleep and no CPU used: not busy")
        #expect(!ProcessProgress(state: "T", cpuTicks: 20).isBusy(since: before), "stopped")
        #expect(!ProcessProgress(state: "Z", cpuTicks: 20).isBusy(since: before), "a zombie")
    }

    @Test func thisProcessCanBeRead() throws {
        let progress = try #require(ProcessProgress.read(pid: getpid()))
        #expect("RS".contains(progress.state))
        #expect(ProcessProgress.read(pid: -1) == nil)
    }
}
