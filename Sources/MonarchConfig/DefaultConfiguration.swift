#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Configuration {
    /// Where the embedded default serves HTTP, unless ``defaultHTTPVariable`` says otherwise:
    /// `curl localhost:8080/hello.txt` reads `./hello.txt`.
    public static let defaultHTTPAddress = "tcp:127.0.0.1:8080"

    /// The environment variable that moves the embedded default's HTTP listener: an address on
    /// a loopback host or a Unix socket (`tcp:127.0.0.1:9000`, `tcp:127.0.0.1:0` for any free
    /// port, `unix:PATH`), or `off` for none. A configuration file sets `listen.http` instead.
    public static let defaultHTTPVariable = "MONARCH_HTTP"

    /// Where the example origin of the embedded default and of `Examples/` listens
    /// (`Examples/origin.py`): `api/...` is fetched from there.
    public static let exampleOrigin = "127.0.0.1:8081"

    /// The embedded default configuration as commented YAML, its sockets in `runtimeDirectory`:
    /// `monarch` uses it when no file is given and the working directory has no `monarch.yml`.
    ///
    /// It serves the working directory over HTTP on `http` (`off`: no HTTP listener) and to
    /// clients: every path is a file there (`bundle`, dotfiles refused), and `api/...` is
    /// fetched from `http://127.0.0.1:8081/...` (``exampleOrigin``) through a 64 MB memory
    /// cache (fresh for 60 s). Clients connect at `unix:RUNTIME/monarch.sock`, workers at
    /// `unix:RUNTIME/workers.sock`, where `RUNTIME` is the working directory's
    /// ``RuntimeDirectory``; nothing is written to the working directory.
    public static func defaultYAML(runtimeDirectory: String, http: String = defaultHTTPAddress) -> String {
        let httpLine = http == "off" ? "" : """
              http: \(quoted(http))   # HTTP/1.1 for curl and browsers (\(defaultHTTPVariable) moves it)

            """
        return """
            # Monarch's embedded default configuration: the files of the working directory for
            # every path, over HTTP and to clients, and api/... fetched from a server on
            # \(exampleOrigin) through a memory cache. The sockets are in this working
            # directory's runtime folder.
            listen:
            \(httpLine)  clients: [\(quoted("unix:" + runtimeDirectory + "/monarch.sock"))]   # where clients and the CLI connect
              workers: \(quoted("unix:" + runtimeDirectory + "/workers.sock"))     # where workers dial in and register
            domains:                                  # domain -> providers, asked in this order
              files: [bundle]
              api: [cache, network]
            routes:                                   # path patterns -> domain, most specific first
              - match: "..."                          # every path: a file of the working directory
                domain: files
              - match: "api/..."                      # api/users/1 -> http://\(exampleOrigin)/users/1
                domain: api
                upstream: http://\(exampleOrigin)/...
                ttl: 60s                              # cached answers stay fresh for a minute
            workers:                                  # the workers the coordinator launches
              bundle: { count: 1, root: . }           # request path docs/a.txt -> ./docs/a.txt (no dotfiles)
              cache: { count: 1, memory: 64MB }       # memory only: nothing is written to disk
              network: { count: 1, allow: ["\(exampleOrigin)"] }   # the only upstream it may reach

            """
    }

    /// The HTTP address the embedded default listens on under `environment`:
    /// ``defaultHTTPVariable``'s value when set, else ``defaultHTTPAddress``.
    public static func defaultHTTP(environment: [String: String]) -> String {
        environment[defaultHTTPVariable] ?? defaultHTTPAddress
    }

    /// The embedded default (``defaultYAML(runtimeDirectory:http:)``) for the working
    /// directory `baseDirectory`: it serves that folder, its HTTP listener is
    /// ``defaultHTTP(environment:)``, and its sockets are in the folder's ``RuntimeDirectory``
    /// (found with `environment`'s `XDG_RUNTIME_DIR`).
    ///
    /// - Throws: ``ConfigError`` naming ``defaultHTTPVariable`` when its value is not an
    ///   address the HTTP front door may listen on; nothing else fails.
    public static func defaultConfiguration(
        baseDirectory: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigError) -> Configuration {
        let base = resolvePath(baseDirectory, against: currentDirectory())
        let runtime = RuntimeDirectory.path(forWorkingDirectory: base, environment: environment)
        let context = ParseContext(
            baseDirectory: base, fileName: "(embedded default)", environment: [:])
        let http = defaultHTTP(environment: environment)
        do {
            return try parse(yaml: defaultYAML(runtimeDirectory: runtime, http: http), context: context)
        } catch where environment[defaultHTTPVariable] != nil {
            throw ConfigError(
                keyPath: defaultHTTPVariable,
                problem: "\(http.debugDescription) cannot be the embedded default's listen.http: \(error.problem) "
                    + "(expected an address such as tcp:127.0.0.1:9000 or unix:PATH, or off)")
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
