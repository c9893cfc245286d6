#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Configuration {
    /// The embedded default configuration as commented YAML, its sockets in `runtimeDirectory`:
    /// `monarch` uses it when no file is given and the working directory has no `monarch.yml`.
    ///
    /// It serves the working directory: every path is a file there (`bundle`, dotfiles
    /// refused), and `api/...` is fetched from `http://127.0.0.1:8080/...` through a 64 MB
    /// memory cache (fresh for 60 s). Clients connect at `unix:RUNTIME/monarch.sock`, workers
    /// at `unix:RUNTIME/workers.sock`, where `RUNTIME` is the working directory's
    /// ``RuntimeDirectory``; nothing is written to the working directory.
    public static func defaultYAML(runtimeDirectory: String) -> String {
        """
        # Monarch's embedded default configuration: the files of the working directory for
        # every path, and api/... fetched from a server on 127.0.0.1:8080 through a memory
        # cache. The sockets are in this working directory's runtime folder.
        listen:
          clients: [\(quoted("unix:" + runtimeDirectory + "/monarch.sock"))]   # where clients and the CLI connect
          workers: \(quoted("unix:" + runtimeDirectory + "/workers.sock"))     # where workers dial in and register
        domains:                                  # domain -> providers, asked in this order
          files: [bundle]
          api: [cache, network]
        routes:                                   # path patterns -> domain, most specific first
          - match: "..."                          # every path: a file of the working directory
            domain: files
          - match: "api/..."                      # api/users/1 -> http://127.0.0.1:8080/users/1
            domain: api
            upstream: http://127.0.0.1:8080/...
            ttl: 60s                              # cached answers stay fresh for a minute
        workers:                                  # the workers the coordinator launches
          bundle: { count: 1, root: . }           # request path docs/a.txt -> ./docs/a.txt (no dotfiles)
          cache: { count: 1, memory: 64MB }       # memory only: nothing is written to disk
          network: { count: 1, allow: ["127.0.0.1:8080"] }   # the only upstream it may reach

        """
    }

    /// The embedded default (``defaultYAML(runtimeDirectory:)``) for the working directory
    /// `baseDirectory`: it serves that folder, and its sockets are in the folder's
    /// ``RuntimeDirectory`` (found with `environment`'s `XDG_RUNTIME_DIR`).
    ///
    /// Never fails.
    public static func defaultConfiguration(
        baseDirectory: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Configuration {
        let base = resolvePath(baseDirectory, against: currentDirectory())
        let runtime = RuntimeDirectory.path(forWorkingDirectory: base, environment: environment)
        let context = ParseContext(
            baseDirectory: base, fileName: "(embedded default)", environment: [:])
        do {
            return try parse(yaml: defaultYAML(runtimeDirectory: runtime), context: context)
        } catch {
            // The tests parse the default under short and long base directories.
            fatalError("the embedded default configuration does not parse: \(error)")
        }
    }

    /// `text` as a double-quoted YAML scalar.
    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
