import Monarch
import MonarchWire

/// What HTTP's caching rules (``HTTPCacheRules``) ask of a hot-tier entry that answers a
/// relayed request, so that it answers exactly as the chain's ``Monarch/Request/relay`` run
/// would from the cache worker.
enum RelayedHotHit {
    /// Whether `request` may take a hot hit at all: it says nothing of caches (no
    /// `Cache-Control` or `Pragma`, whose directives may ask for validation).
    static func mayAnswer(_ request: Request) -> Bool {
        request.headers["cache-control"] == nil && request.headers["pragma"] == nil
    }

    /// How old an entry is and how long it stays fresh, in seconds.
    struct Freshness {
        var age: Int64
        var lifetime: Int64
    }

    /// The age and lifetime of `message`, held for `ageMs` since it was kept (its age counting
    /// its `Age` on receipt), when it is fresh by HTTP's rules and free of `no-cache`; nil when
    /// it is not.
    static func freshness(of message: ResponseMessage, ageMs: UInt64, defaultLifetime: Duration?) -> Freshness? {
        let headers = message.headers ?? [:]
        guard !HTTPCacheRules.controls(of: headers).directives.has("no-cache") else { return nil }
        let age = HTTPCacheRules.ageHeader(headers) + Int64(ageMs / 1000)
        let now = WallClock.system.nowMs / 1000
        let lifetime = HTTPCacheRules.freshnessLifetime(
            headers: headers, status: message.status, receivedAt: now - age, defaultLifetime: defaultLifetime)
        return lifetime > age ? Freshness(age: age, lifetime: lifetime) : nil
    }

    /// `message` as the answer to request `id`: its `Age` now and its `Cache-Status` a hit.
    static func message(_ message: ResponseMessage, id: MessageID, ageMs: UInt64, freshness: Freshness) -> ResponseMessage {
        var answer = message
        answer.id = id
        var headers = message.headers ?? [:]
        headers["age"] = String(freshness.age)
        let own = "monarch; hit; ttl=\(freshness.lifetime - freshness.age)"
        headers["cache-status"] = headers["cache-status"].map { $0 + ", " + own } ?? own
        answer.headers = headers
        answer.ageMs = ageMs
        return answer
    }
}
