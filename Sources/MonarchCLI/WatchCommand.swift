import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
import MonarchClient
import MonarchWire

/// `monarch watch`: prints the changes the coordinator pushes for some cache entries.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print each change to cached entries: of a path, a path prefix, a tag or a raw key.",
        discussion: """
            Names entries as `monarch invalidate` does (a PATH through the routes, --prefix, \
            --tag, --key, --key-prefix). First prints "watching" and what the target resolved \
            to, then one line per change: stored, refreshed or invalidated, and what it \
            concerns; "overflow" when changes were lost because this command read too slowly. \
            With --json each line is a JSON object. Runs until interrupted, or until --count \
            changes were printed; when the coordinator goes away it reconnects and watches on \
            (an "overflow" line marks what may have been missed meanwhile). Exits 1 when the \
            target does not resolve or the coordinator refuses the watch (also after a \
            reconnection), 2 when the coordinator cannot be reached at the start.
            """
    )

    @Argument(help: "The resource path whose entries to watch, such as users/1.")
    var path: String?

    @Option(help: "Watch the entries of every path starting with this one.")
    var prefix: String?

    @Option(help: "Watch every entry tagged so.")
    var tag: String?

    @Option(help: "Watch the entry under this raw cache key.")
    var key: String?

    @Option(help: "Watch every entry whose raw cache key starts with this.")
    var keyPrefix: String?

    @Option(help: "The domain of PATH or --prefix (default: the route's).")
    var domain: String?

    @Option(help: "Exit after printing this many changes.")
    var count: Int?

    @Flag(help: "Print each change as a JSON object.")
    var json = false

    @OptionGroup var coordinator: CoordinatorOptions

    /// The entries named.
    private var choice: CacheTargetChoice {
        CacheTargetChoice(path: path, prefix: prefix, tag: tag, key: key, keyPrefix: keyPrefix, domain: domain)
    }

    func validate() throws {
        try choice.validate(for: "watch")
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    var target: CacheTarget { choice.target }

    func run() async throws {
        _ = coordinator.config.startProcess()
        let client = try await coordinator.connectOrExit(as: "watch")
        let watch: CacheWatch
        do {
            watch = try await client.watch(target)
        } catch {
            printToStandardError("monarch watch: \(error)")
            await client.close()
            throw error.isConnectionLost ? ExitCode(2) : ExitCode.failure
        }
        print("watching \(watch.targets.joined(separator: ", "))")
        flushStandardOutput()
        var printed = 0
        for await change in watch {
            print(json ? Self.json(change) : Self.line(change))
            flushStandardOutput()
            printed += 1
            if let count, printed >= count { break }
        }
        let finished = count.map { printed >= $0 } ?? false
        await client.close()
        if !finished {
            printToStandardError("monarch watch: the coordinator no longer takes the watch (after a reconnection)")
            throw ExitCode.failure
        }
    }

    /// One change as a line: `stored GET api users/1 [user-1 users]`, `invalidated tag users`,
    /// `overflow 12 lost`.
    static func line(_ change: CacheChange) -> String {
        switch change.kind {
        case .stored, .refreshed:
            let tags = change.tags.isEmpty ? "" : " [\(change.tags.joined(separator: " "))]"
            return "\(change.kind.rawValue) \(change.key ?? "?")\(tags)"
        case .invalidated:
            if let key = change.key { return "invalidated key \(key)" }
            if let prefix = change.prefix { return "invalidated prefix \(prefix)" }
            return "invalidated tag \(change.tag ?? "?")"
        case .overflow:
            return "overflow \(change.dropped.map { "\($0) lost" } ?? "(changes may have been missed)")"
        }
    }

    /// One change as a JSON object.
    static func json(_ change: CacheChange) -> String {
        var object: [String: JSONValue] = ["event": .string(change.kind.rawValue)]
        if let key = change.key { object["key"] = .string(key) }
        if let prefix = change.prefix { object["prefix"] = .string(prefix) }
        if let tag = change.tag { object["tag"] = .string(tag) }
        if !change.tags.isEmpty { object["tags"] = .array(change.tags.map { .string($0) }) }
        if let dropped = change.dropped { object["dropped"] = .integer(Int64(dropped)) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(object)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

extension MonarchError {
    /// Whether the error is the connection's (exit 2) rather than a refusal.
    var isConnectionLost: Bool {
        if case .transport = self { true } else { false }
    }
}
