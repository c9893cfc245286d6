import ArgumentParser
import Monarch
import MonarchClient
import MonarchWire

/// `monarch invalidate`: drops cached entries on every cache worker.
struct InvalidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invalidate",
        abstract: "Drop cached entries: one key, or every key starting with a prefix.",
        discussion: """
            A cache key reads METHOD DOMAIN PATH?QUERY, the query items encoded and sorted: \
            "GET api users/1", "GET static docs/a.txt?lang=en". So --prefix "GET api users/" \
            drops every cached user. Prints how many entries were removed. Exits 1 when no \
            cache worker is connected or one did not answer, 2 when the coordinator cannot be \
            reached.
            """
    )

    @Argument(help: "The exact key to drop, such as \"GET api users/1\".")
    var key: String?

    @Option(help: "Drop every key that starts with this prefix instead.")
    var prefix: String?

    @OptionGroup var coordinator: CoordinatorOptions

    func validate() throws {
        switch (key, prefix) {
        case (nil, nil): throw ValidationError("give a KEY or --prefix PREFIX")
        case (_?, _?): throw ValidationError("give a KEY or --prefix PREFIX, not both")
        case (_, let prefix?) where prefix.isEmpty:
            throw ValidationError("--prefix must not be empty (it would drop every entry)")
        default: break
        }
    }

    func run() async throws {
        _ = coordinator.config.startProcess()
        let target: InvalidateMessage.Target = key.map { .key($0) } ?? .prefix(prefix!)
        let client: MonarchClient
        do {
            client = try await coordinator.connect()
        } catch {
            printToStandardError("monarch invalidate: \(error)")
            throw ExitCode(2)
        }
        let outcome: Result<Invalidation, MonarchError>
        do {
            outcome = .success(try await client.invalidate(target))
        } catch {
            outcome = .failure(error)
        }
        await client.close()
        switch outcome {
        case .success(let done):
            print("removed \(done.removed) entr\(done.removed == 1 ? "y" : "ies") on \(done.workers) cache worker\(done.workers == 1 ? "" : "s")")
        case .failure(let error):
            printToStandardError("monarch invalidate: \(error)")
            if case .transport = error { throw ExitCode(2) }
            throw ExitCode.failure
        }
    }
}
