extension Configuration {
    /// `http:`: what the HTTP front door (`listen.http`) allows beyond reading through the chain.
    public struct HTTP: Sendable, Equatable {
        /// `http.purgeFrom`: who may send `PURGE` (drop or mark stale cached entries by path or
        /// by `Surrogate-Key`); empty, the default: nobody (every `PURGE` is refused with 403).
        public var purgeFrom: [PurgeSource]

        /// The settings as given; by default nobody may purge.
        public init(purgeFrom: [PurgeSource] = []) {
            self.purgeFrom = purgeFrom
        }

        /// Whether a connection accepted on a Unix socket listener may purge (`unix` is listed).
        public var allowsPurgeFromUnixSockets: Bool { purgeFrom.contains(.unixSocket) }

        /// Whether a TCP connection from the IP address `host` may purge: a listed address or
        /// block holds it.
        public func allowsPurge(fromHost host: String) -> Bool {
            purgeFrom.contains { source in
                if case .addresses(let range) = source { range.contains(host) } else { false }
            }
        }
    }

    /// Where a `PURGE` may come from (`http.purgeFrom`).
    public enum PurgeSource: Sendable, Hashable, CustomStringConvertible {
        /// `unix`: any connection to a Unix socket of `listen.http` (who may reach it is the
        /// socket file's mode to say).
        case unixSocket
        /// An address or CIDR block a TCP peer is in.
        case addresses(AddressRange)

        /// `unix`, `127.0.0.1`, `10.0.0.0/8`.
        public var description: String {
            switch self {
            case .unixSocket: "unix"
            case .addresses(let range): range.description
            }
        }
    }

    /// The keys of `http:`.
    static let httpKeys = ["purgeFrom"]

    /// Parses `http`: `purgeFrom`, one source or a list of them, each `unix` or an IP address
    /// or CIDR block (`127.0.0.1`, `"::1"`, `10.0.0.0/8`); none twice.
    static func parseHTTP(_ node: ConfigNode) throws(ConfigError) -> HTTP {
        let http = try node.mapping(allowedKeys: httpKeys)
        guard let purgeNode = http.optional("purgeFrom") else { return HTTP() }
        let nodes = if case .sequence = purgeNode.node { try purgeNode.sequence() } else { [purgeNode] }
        var sources: [PurgeSource] = []
        for node in nodes {
            let text = try node.nonEmptyString(expecting: "unix, an IP address or a CIDR block such as 127.0.0.1 or 10.0.0.0/8")
            let source: PurgeSource
            if text == "unix" {
                source = .unixSocket
            } else if let range = AddressRange(parsing: text) {
                source = .addresses(range)
            } else {
                throw node.error(
                    "expected unix, an IP address or a CIDR block (127.0.0.1, \"::1\", 10.0.0.0/8; no host names, and no "
                        + "bits set past a block's prefix), got \(text.debugDescription)")
            }
            guard !sources.contains(source) else { throw node.error("\(source) is listed twice") }
            sources.append(source)
        }
        return HTTP(purgeFrom: sources)
    }
}
