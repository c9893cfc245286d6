extension Configuration {
    /// The embedded default configuration as commented YAML: it serves when no file is given.
    ///
    /// Clients connect at `unix:.monarch/monarch.sock`, workers at `unix:.monarch/workers.sock`;
    /// one domain `static` served by the `bundle` provider; one route sending every path
    /// (`...`) to it; one bundle worker serving the folder `Bundle`. Relative paths are resolved
    /// against the base directory given to ``defaultConfiguration(baseDirectory:)``.
    /// `Examples/monarch.yml` says the same, explained line by line.
    public static let defaultYAML = """
        # Monarch's embedded default configuration: one bundle worker serving the folder
        # ./Bundle for every request path. Relative paths are taken from the working directory.
        listen:
          clients: [unix:.monarch/monarch.sock]   # where clients and the CLI connect
          workers: unix:.monarch/workers.sock     # where workers dial in and register
        domains:                                  # domain -> providers, asked in this order
          static: [bundle]
        routes:                                   # path patterns -> domain, most specific first
          - match: "..."                          # every path
            domain: static
        workers:                                  # the workers the coordinator launches
          bundle: { count: 1, root: Bundle }      # request path docs/a.txt -> Bundle/docs/a.txt

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
