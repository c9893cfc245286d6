#if canImport(Glibc)
import Glibc
#endif

/// What a write to a socket whose peer went away does in this process: an error on that
/// write, never the end of the process. libuv writes streams with `write`, which raises
/// SIGPIPE on a closed peer, and SIGPIPE's default action ends the process.
public enum BrokenPipes {
    /// Ignores SIGPIPE unless the process has already chosen what it does (a handler of its
    /// own, or ignoring it): a program embedding Monarch's client keeps its choice. Every event
    /// loop calls it when it starts.
    public static func ignoreUnlessHandled() {
        var current = sigaction()
        guard sigaction(SIGPIPE, nil, &current) == 0 else { return }
        // SIG_DFL is a null handler.
        guard current.__sigaction_handler.sa_handler == nil else { return }
        signal(SIGPIPE, SIG_IGN)
    }
}
