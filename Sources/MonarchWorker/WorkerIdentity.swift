import MonarchWire

/// Who a worker says it is when it dials in to the coordinator.
public struct WorkerIdentity: Sendable, Equatable {
    /// The worker's kind (`bundle`, `cache`, `network`, …): the pool it joins.
    public var kind: String
    /// A name for logs and status reports (`bundle-1`); the kind when not given.
    public var name: String
    /// How many requests the worker runs at once.
    public var capacity: Int
    /// The shared secret the coordinator's worker listener asks for, if any.
    public var token: String?

    /// Creates an identity.
    public init(kind: String, name: String? = nil, capacity: Int = 256, token: String? = nil) {
        self.kind = kind
        self.name = name ?? kind
        self.capacity = capacity
        self.token = token
    }

    /// The `hello` that registers this worker, with the process id.
    func hello(pid: Int) -> Hello {
        Hello(role: .worker, token: token, kind: kind, capacity: capacity, pid: pid, name: name)
    }
}
