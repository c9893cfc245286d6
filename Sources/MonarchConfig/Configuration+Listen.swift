import MonarchWire

/// The listeners of a configuration with the nodes they came from, for later checks.
struct Listeners {
    /// One listener and its node.
    struct Entry {
        /// The parsed address.
        let address: SocketAddress
        /// Where it was written.
        let node: ConfigNode
    }

    /// `listen.clients`, in order.
    let clients: [Entry]
    /// `listen.workers`.
    let workers: Entry
    /// `listen.group`, if given.
    var group: String?
    /// `listen.http`, in order.
    var http: [Entry] = []

    /// Clients first, then workers, then HTTP.
    var all: [Entry] { clients + [workers] + http }
}

extension Configuration {
    /// Parses `listen`: `clients` (one address or a list of at least one) and `workers` (one
    /// address), all distinct, relative Unix paths resolved against the base directory; and
    /// `group`, a group name of the system (`[A-Za-z_][A-Za-z0-9_.-]*`; whether it exists is
    /// checked when the sockets are made); and `http`, the HTTP listeners (one address or a
    /// list), on a loopback address or a Unix socket only (the front door has no
    /// authentication yet).
    static func parseListen(_ node: ConfigNode, context: ParseContext) throws(ConfigError) -> Listeners {
        let listen = try node.mapping(allowedKeys: ["clients", "workers", "group", "http"])
        let clientsNode = try listen.required("clients", describing: "an address or a list of addresses")
        let clientNodes: [ConfigNode]
        if case .sequence = clientsNode.node {
            clientNodes = try clientsNode.sequence()
            guard !clientNodes.isEmpty else { throw clientsNode.error("expected at least one address, got an empty list") }
        } else {
            clientNodes = [clientsNode]
        }
        func entry(_ node: ConfigNode) throws(ConfigError) -> Listeners.Entry {
            .init(address: try node.address(baseDirectory: context.baseDirectory), node: node)
        }
        var clients: [Listeners.Entry] = []
        for clientNode in clientNodes { clients.append(try entry(clientNode)) }
        let workers = try entry(listen.required("workers", describing: "an address such as unix:PATH or tcp:HOST:PORT"))
        var listeners = Listeners(clients: clients, workers: workers)
        if let httpNode = listen.optional("http") {
            let httpNodes = if case .sequence = httpNode.node { try httpNode.sequence() } else { [httpNode] }
            for node in httpNodes {
                let http = try entry(node)
                guard isLocal(http.address) else {
                    throw node.error("\(http.address) can be reached from other machines; the HTTP front door has no "
                        + "authentication yet, so it listens on 127.0.0.1, ::1, localhost or a Unix socket only")
                }
                listeners.http.append(http)
            }
        }
        if let groupNode = listen.optional("group") {
            let group = try groupNode.string(expecting: "a group name")
            guard let first = group.first, first == "_" || (first.isASCII && first.isLetter),
                group.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_.-".contains($0)) })
            else { throw groupNode.error("\(group.debugDescription) is not a group name") }
            listeners.group = group
        }
        var seen: [SocketAddress: String] = [:]
        for listener in listeners.all {
            if let earlier = seen[listener.address] {
                throw listener.node.error("\(listener.address) is already used by \(earlier)")
            }
            seen[listener.address] = listener.node.keyPath
        }
        return listeners
    }
}
