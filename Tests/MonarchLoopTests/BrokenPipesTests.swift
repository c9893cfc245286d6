#if canImport(Glibc)
import Glibc
#endif
import MonarchLoop
import Testing

@Suite(.serialized) struct BrokenPipesTests {
    private func sigpipeHandler() -> sighandler_t? {
        var current = sigaction()
        sigaction(SIGPIPE, nil, &current)
        return current.__sigaction_handler.sa_handler
    }

    @Test func anEventLoopLeavesSIGPIPENoLongerFatal() throws {
        let loop = try EventLoop(name: "broken-pipes")
        defer { _ = loop.shutdown() }
        #expect(sigpipeHandler() != nil, "SIGPIPE's default action would end the process")
    }

    @Test func aHandlerTheProgramInstalledIsKept() {
        let own: @convention(c) (Int32) -> Void = { _ in }
        signal(SIGPIPE, own)
        BrokenPipes.ignoreUnlessHandled()
        let kept = sigpipeHandler().map { unsafeBitCast($0, to: UnsafeRawPointer.self) }
        #expect(kept == unsafeBitCast(own, to: UnsafeRawPointer.self))
        signal(SIGPIPE, SIG_IGN)
    }
}
