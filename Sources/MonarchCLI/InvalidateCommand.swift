import ArgumentParser
import Monarch
import MonarchClient
import MonarchWire

/// `monarch invalidate`: drops cached entries on every cache worker.
struct InvalidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invalidate",
        abstract: "Drop cached entries: of a path, of every path under a prefix, with a tag, or under a raw key.",
        discussion: """
            A PATH is resolved through the coordinator's routes exactly as `monarch get PATH` \
            is, so `monarch invalidate users/1` drops what `monarch get users/1` cached (its GET \
            and HEAD entries, in the route's domain unless --domain names another). --prefix \
            users/ drops the entries of every path starting with users/ (in each domain whose \
            routes such paths may match, or in --domain). --tag drops every entry an upstream \
            tagged so (a Surrogate-Key or Cache-Tag header). --key and --key-prefix name raw \
            cache keys, which read METHOD DOMAIN PATH?QUERY ("GET api users/1"). Prints how many \
            entries were removed and what the target resolved to, and says "nothing matched" \
            when nothing was cached under it (exit 0). Exits 1 when no route matches the path, \
            no cache worker is connected or one did not answer, 2 when the coordinator cannot \
            be reached.
            """
    )

    @Argument(help: "The resource path whose entries to drop, such as users/1 (as given to monarch get).")
    var path: String?

    @Option(help: "Drop the entries of every path starting with this one, such as users/.")
    var prefix: String?

    @Option(help: "Drop every entry tagged so by its upstream (Surrogate-Key or Cache-Tag).")
    var tag: String?

    @Option(help: "Drop the entry under this raw cache key, such as \"GET api users/1\".")
    var key: String?

    @Option(help: "Drop every entry whose raw cache key starts with this, such as \"GET api users/\".")
    var keyPrefix: String?

    @Option(help: "The domain of PATH or --prefix (default: the route's).")
    var domain: String?

    @OptionGroup var coordinator: CoordinatorOptions

    /// The entries named.
    private var choice: CacheTargetChoice {
        CacheTargetChoice(path: path, prefix: prefix, tag: tag, key: key, keyPrefix: keyPrefix, domain: domain)
    }

    func validate() throws {
        try choice.validate(for: "invalidate")
    }

    var target: CacheTarget { choice.target }

    func run() async throws {
        _ = coordinator.config.startProcess()
        let client = try await coordinator.connectOrExit(as: "invalidate")
        let outcome: Result<Invalidation, MonarchError>
        do {
            outcome = .success(try await client.invalidate(target))
        } catch {
            outcome = .failure(error)
        }
        await client.close()
        switch outcome {
        case .success(let done):
            print(Self.report(done, target: target))
        case .failure(let error):
            printToStandardError("monarch invalidate: \(error)")
            if case .transport = error { throw ExitCode(2) }
            throw ExitCode.failure
        }
    }

    /// The line printed for a done invalidation: what was removed, or that nothing matched.
    static func report(_ done: Invalidation, target: CacheTarget) -> String {
        let resolved = done.targets.isEmpty ? target.description : done.targets.joined(separator: ", ")
        let workers = "\(done.workers) cache worker\(done.workers == 1 ? "" : "s")"
        if done.matchedNothing { return "nothing matched \(resolved): removed 0 entries on \(workers)" }
        return "removed \(done.removed) entr\(done.removed == 1 ? "y" : "ies") on \(workers) (\(resolved))"
    }
}
