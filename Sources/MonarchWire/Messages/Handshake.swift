/// The first message on every connection: who is connecting and which protocol version it speaks.
public struct Hello: Codable, Sendable, Equatable {
    /// Which side of the system the connecting process is.
    public enum Role: String, Codable, Sendable {
        /// Asks for resources (the CLI, the client library, another language's client).
        case client
        /// Serves a provider pool (cache, bundle, network, …).
        case worker
    }

    /// Which side of the system the connecting process is.
    public var role: Role
    /// The protocol version the sender speaks (1 for this document).
    public var version: Int
    /// The shared secret, where the listener requires one.
    public var token: String?
    /// A worker's kind (`cache`, `bundle`, `network`, …); required for workers.
    public var kind: String?
    /// How many requests a worker runs at once.
    public var capacity: Int?
    /// How many requests for one upstream host a worker runs at once (a network worker's
    /// connections per host); absent: ``capacity``.
    public var hostCapacity: Int?
    /// The sender's process id, for status reports.
    public var pid: Int?
    /// A free-form name for logs and status reports.
    public var name: String?
    /// The protocol extensions the sender can use (``WireFeature``); the listener's `welcome`
    /// says which of them the connection uses.
    public var features: [String]?

    /// Creates a hello.
    public init(
        role: Role, version: Int = WireProtocol.version, token: String? = nil, kind: String? = nil,
        capacity: Int? = nil, hostCapacity: Int? = nil, pid: Int? = nil, name: String? = nil,
        features: [String]? = nil
    ) {
        self.role = role
        self.version = version
        self.token = token
        self.kind = kind
        self.capacity = capacity
        self.hostCapacity = hostCapacity
        self.pid = pid
        self.name = name
        self.features = features
    }

    private enum CodingKeys: String, CodingKey {
        case role, version, token, kind, capacity, hostCapacity, pid, name, features
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        role = try c.decode(Role.self, forKey: .role)
        version = try c.decodeInteger(Int.self, forKey: .version, in: 1...Int.max)
        token = try c.decodeIfPresent(String.self, forKey: .token)
        kind = try c.decodeStringIfPresent(
            forKey: .kind, expected: "a kind matching [a-z][a-z0-9-]*", isValid: WireProtocol.isValidKind)
        if role == .worker && kind == nil {
            throw DecodingError.keyNotFound(
                CodingKeys.kind, .init(codingPath: c.codingPath, debugDescription: "a worker's hello names its kind"))
        }
        capacity = try c.decodeIntegerIfPresent(Int.self, forKey: .capacity, in: 1...Int.max)
        hostCapacity = try c.decodeIntegerIfPresent(Int.self, forKey: .hostCapacity, in: 1...Int.max)
        pid = try c.decodeIntegerIfPresent(Int.self, forKey: .pid)
        name = try c.decodeIfPresent(String.self, forKey: .name)
        features = try WireFeature.decodeList(from: c, forKey: .features)
    }
}

/// The answer to an accepted ``Hello``.
public struct Welcome: Codable, Sendable, Equatable {
    /// The protocol version both sides now speak.
    public var version: Int
    /// The largest frame payload the sender of the welcome accepts.
    public var maxFrameBytes: Int?
    /// The id the coordinator gave a worker, for status reports and logs.
    public var workerId: String?
    /// How often the peer should expect or send pings, in milliseconds.
    public var heartbeatMs: Int?
    /// The coordinator's identity in a shared cache store (a worker): a cache worker marks
    /// the changes it publishes with it, and forwards (``SharedChangeMessage``) only the
    /// changes other coordinators made.
    public var origin: String?
    /// The protocol extensions the connection uses from now on: those of the hello's
    /// ``Hello/features`` the listener agreed to (``WireFeature``).
    public var features: [String]?
    /// To a client: the coordinator's software release (``MonarchRelease/version``).
    public var release: String?
    /// To a client: how long the coordinator had run when it sent the welcome, in milliseconds.
    public var uptimeMs: Int?

    /// Creates a welcome.
    public init(
        version: Int = WireProtocol.version, maxFrameBytes: Int? = nil, workerId: String? = nil,
        heartbeatMs: Int? = nil, origin: String? = nil, features: [String]? = nil, release: String? = nil,
        uptimeMs: Int? = nil
    ) {
        self.version = version
        self.maxFrameBytes = maxFrameBytes
        self.workerId = workerId
        self.heartbeatMs = heartbeatMs
        self.origin = origin
        self.features = features
        self.release = release
        self.uptimeMs = uptimeMs
    }

    private enum CodingKeys: String, CodingKey {
        case version, maxFrameBytes, workerId, heartbeatMs, origin, features, release, uptimeMs
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        version = try c.decodeInteger(Int.self, forKey: .version, in: 1...Int.max)
        maxFrameBytes = try c.decodeIntegerIfPresent(Int.self, forKey: .maxFrameBytes, in: 1...Int.max)
        workerId = try c.decodeIfPresent(String.self, forKey: .workerId)
        heartbeatMs = try c.decodeIntegerIfPresent(Int.self, forKey: .heartbeatMs, in: 0...Int.max)
        origin = try c.decodeIfPresent(String.self, forKey: .origin)
        features = try WireFeature.decodeList(from: c, forKey: .features)
        release = try c.decodeStringIfPresent(
            forKey: .release, expected: "a release of at most 64 characters", isValid: { $0.count <= 64 })
        uptimeMs = try c.decodeIntegerIfPresent(Int.self, forKey: .uptimeMs, in: 0...Int.max)
    }

    /// The largest payload to send the listener: its ``maxFrameBytes`` (the protocol's default
    /// when it announced none), within `1...UInt32.max`, what a frame header can announce.
    public var frameLimit: Int {
        min(max(1, maxFrameBytes ?? FrameDecoder.defaultMaxFrameBytes), Int(UInt32.max))
    }

    /// Whether the connection uses the extension `feature` (``WireFeature``) from now on.
    public func agreed(to feature: String) -> Bool {
        features?.contains(feature) ?? false
    }
}
