/// What a pool's workers are to the coordinator. It decides the pool's type (a ``CachePool``
/// or a plain ``WorkerPool``) and how its requests find a worker; everything after the pool is
/// made asks the pool, never a kind's name.
enum PoolRole: Sendable, Equatable {
    /// Workers that keep responses: keys sharded across them, write-backs, invalidations and
    /// shared changes (a ``CachePool``).
    case cache
    /// Workers that only answer requests (`bundle`, `network`, or a kind of one's own).
    case provider

    /// The role of the pool that workers registering as `kind` form: `cache` workers keep
    /// responses; every other kind provides them. The one place a kind's name decides a role.
    init(workerKind kind: String) {
        self = kind == "cache" ? .cache : .provider
    }
}
