#if canImport(Glibc)
import Glibc
#endif
import MonarchLoop
import MonarchWire

/// Who a worker says it is when it dials in to the coordinator.
public struct WorkerIdentity: Sendable, Equatable {
    /// The worker's kind (`bundle`, `cache`, `network`, …): the pool it joins.
    public var kind: String
    /// A name for logs and status reports (`bundle-1`), unique among the workers of its kind:
    /// cache pools shard keys on it. When not given: `KIND@HOSTNAME` (one worker per host or
    /// container).
    public var name: String
    /// How many requests the worker runs at once.
    public var capacity: Int
    /// How many requests for one upstream host it runs at once; nil: ``capacity``.
    public var hostCapacity: Int?
    /// The shared secret the coordinator's worker listener asks for, if any.
    public var token: String?

    /// Creates an identity.
    public init(kind: String, name: String? = nil, capacity: Int = 256, hostCapacity: Int? = nil, token: String? = nil) {
        self.kind = kind
        self.name = name ?? "\(kind)@\(Self.hostName())"
        self.capacity = capacity
        self.hostCapacity = hostCapacity
        self.token = token
    }

    /// The secret a worker presents: the key the coordinator that started it gave it
    /// (`MONARCH_WORKER_KEY`), which proves the name it was started under, else the workers'
    /// secret (`MONARCH_WORKER_TOKEN`, the coordinator's `auth.workerToken`), else none. The
    /// clients' token is never a worker's.
    public static var tokenFromEnvironment: String? {
        ProcessSetup.environment("MONARCH_WORKER_KEY") ?? ProcessSetup.environment("MONARCH_WORKER_TOKEN")
    }

    /// This machine's (or container's) host name.
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The `hello` that registers this worker, with the process id `pid`.
    public func hello(pid: Int) -> Hello {
        Hello(
            role: .worker, token: token, kind: kind, capacity: capacity, hostCapacity: hostCapacity, pid: pid, name: name,
            features: WireFeature.supported)
    }
}
