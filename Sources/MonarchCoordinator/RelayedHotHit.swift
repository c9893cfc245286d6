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

    /// Whether `message`, held for `ageMs` since it was kept, is fresh by HTTP's rules (its age
    /// counting its `Age` on receipt) and free of `no-cache`.
    static func isFresh(_ message: ResponseMessage, ageMs: UInt64, defaultLifetime: Duration?) -> Bool {
        let headers = message.headers ?? [:]
        guard !HTTPCacheRules.controls(of: headers).directives.has("no-cache") else { return false }
        let (age, lifetime) = ageAndLifetime(headers, status: message.status, ageMs: ageMs, defaultLifetime: defaultLifetime)
        return lifetime > age
    }

    /// `message` as the answer to request `id`: its `Age` now and its `Cache-Status` a hit.
    static func message(_ message: ResponseMessage, id: MessageID, ageMs: UInt64, defaultLifetime: Duration?) -> ResponseMessage {
        var answer = message
        answer.id = id
        var headers = message.headers ?? [:]
        let (age, lifetime) = ageAndLifetime(headers, status: message.status, ageMs: ageMs, defaultLifetime: defaultLifetime)
        headers["age"] = String(age)
        let own = "monarch; hit; ttl=\(lifetime - age)"
        headers["cache-status"] = headers["cache-status"].map { $0 + ", " + own } ?? own
        answer.headers = headers
        answer.ageMs = ageMs
        return answer
    }

    /// The entry's age now (its `Age` when kept, plus `ageMs`) and its freshness lifetime, in seconds.
    private static func ageAndLifetime(
        _ headers: [String: String], status: Int, ageMs: UInt64, defaultLifetime: Duration?
    ) -> (age: Int64, lifetime: Int64) {
        let age = HTTPCacheRules.initialAge(headers: headers, requestedAt: 0, receivedAt: 0) + Int64(ageMs / 1000)
        let now = WallClock.system.nowMs / 1000
        let lifetime = HTTPCacheRules.freshnessLifetime(
            headers: headers, status: status, receivedAt: now - age, defaultLifetime: defaultLifetime)
        return (age, lifetime)
    }
}
