extension Configuration {
    /// The embedded default configuration as commented YAML: `monarch` uses it when no file
    /// is given and the working directory has no `monarch.yml`.
    ///
    /// Clients connect at `unix:.monarch/monarch.sock`, workers at `unix:.monarch/workers.sock`.
    /// Domain `static` is the `bundle` provider, for every path (`...`); domain `api` is
    /// `[cache, network]`, for `api/...`, fetched from `http://127.0.0.1:8080/...` and cached
    /// for 60 s. One bundle worker serves the folder `Bundle`, one cache worker keeps 64 MB in
    /// memory over `.monarch/cache.db`, one network worker may reach `127.0.0.1:8080` only.
    /// Relative paths are resolved against the base directory given to
    /// ``defaultConfiguration(baseDirectory:)``. `Examples/monarch.yml` says the same,
    /// explained line by line, so running in `Examples/` serves `Examples/Bundle`.
    public static let defaultYAML = """
        # Monarch's embedded default configuration: files from ./Bundle for every path, and
        # api/... fetched from a server on 127.0.0.1:8080 through a cache. Relative paths are
        # taken from the working directory.
        listen:
          clients: [unix:.monarch/monarch.sock]   # where clients and the CLI connect
          workers: unix:.monarch/workers.sock     # where workers dial in and register
        domains:                                  # domain -> providers, asked in this order
          static: [bundle]
          api: [cache, network]
        routes:                                   # path patterns -> domain, most specific first
          - match: "..."                          # every path
            domain: static
          - match: "api/..."                      # api/users/1 -> http://127.0.0.1:8080/users/1
            domain: api
            upstream: http://127.0.0.1:8080/...
            ttl: 60s                              # cached answers stay fresh for a minute
        workers:                                  # the workers the coordinator launches
          bundle: { count: 1, root: Bundle }      # request path docs/a.txt -> Bundle/docs/a.txt
          cache: { count: 1, store: sqlite:.monarch/cache.db, memory: 64MB }
          network: { count: 1, allow: ["127.0.0.1:8080"] }   # the only upstream it may reach

        """

    /// The embedded default (``defaultYAML``) with relative paths resolved against
    /// `baseDirectory` (pass the working directory).
    ///
    /// Never fails. A Unix socket path whose absolute form would be too long for a socket
    /// address stays relative, which names the same file as long as `baseDirectory` is the
    /// working directory.
    public static func defaultConfiguration(baseDirectory: String) -> Configuration {
        let context = ParseContext(
            baseDirectory: resolvePath(baseDirectory, against: currentDirectory()),
            fileName: "(embedded default)", environment: [:], keepingLongRelativeSocketPaths: true
        )
        do {
            return try parse(yaml: defaultYAML, context: context)
        } catch {
            // The tests parse the default under short and long base directories.
            fatalError("the embedded default configuration does not parse: \(error)")
        }
    }
}
