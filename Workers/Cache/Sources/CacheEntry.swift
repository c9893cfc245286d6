#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One cached response: what was stored, when (wall clock, so the time survives a restart),
/// and for how long it stays fresh.
///
/// An entry is fresh while its age is below its TTL, and fresh for ever without one. A stale
/// entry is still an answer (flagged stale); only the sweep drops it, `keepStale` after it
/// expired.
public struct CacheEntry: Sendable, Hashable {
    /// The response's status.
    public var status: Int
    /// The response's headers.
    public var headers: [String: String]
    /// The response's body.
    public var body: Data
    /// When the entry was stored: milliseconds since the Unix epoch.
    public var storedAtMs: Int64
    /// How long the entry stays fresh, in milliseconds; nil for ever.
    public var ttlMs: Int64?
    /// The entry's tags (an upstream's `Surrogate-Key` or `Cache-Tag`, as the coordinator
    /// bounded them): an invalidation by tag drops every entry carrying it.
    public var tags: [String]

    /// Creates an entry.
    public init(
        status: Int, headers: [String: String] = [:], body: Data = Data(), storedAtMs: Int64, ttlMs: Int64? = nil,
        tags: [String] = []
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.storedAtMs = storedAtMs
        self.ttlMs = ttlMs
        self.tags = tags
    }

    /// How old the entry is at `nowMs`, in milliseconds; never negative (a wall clock set back
    /// makes an entry younger, not of negative age).
    public func ageMs(at nowMs: Int64) -> Int64 {
        max(0, nowMs &- storedAtMs)
    }

    /// Whether the entry is fresh at `nowMs`: its age is below its TTL, or it has none. An
    /// entry with a TTL stored more than ``clockSkewToleranceMs`` after `nowMs` (by a clock
    /// ahead of this one: before a restart, or another worker's) is not fresh: its freshness
    /// cannot be told, so it is revalidated rather than kept fresh until this clock catches up.
    public func isFresh(at nowMs: Int64) -> Bool {
        guard let ttlMs else { return true }
        guard storedAtMs <= nowMs &+ Self.clockSkewToleranceMs else { return false }
        return ageMs(at: nowMs) < ttlMs
    }

    /// How far ahead of this clock an entry's store time may be and its freshness still count.
    public static let clockSkewToleranceMs: Int64 = 1000

    /// When the entry stops being fresh, in milliseconds since the epoch; nil for never (no
    /// TTL, or one reaching past what an `Int64` holds).
    public var expiresAtMs: Int64? {
        guard let ttlMs else { return nil }
        let (expiry, overflow) = storedAtMs.addingReportingOverflow(ttlMs)
        return overflow ? nil : expiry
    }

    /// The entry made stale at `nowMs` (a soft purge): its freshness ends then (its TTL becomes
    /// its age, at least 0), so it is answered stale from then on and swept `keepStale` after;
    /// nil when it is not fresh at `nowMs` (nothing to change).
    public func madeStale(at nowMs: Int64) -> CacheEntry? {
        guard isFresh(at: nowMs) else { return nil }
        var stale = self
        stale.ttlMs = ageMs(at: nowMs)
        return stale
    }

    /// Whether the sweep drops the entry at `nowMs`: it expired at least `keepStaleMs` ago.
    public func isSweepable(at nowMs: Int64, keepStaleMs: Int64) -> Bool {
        guard let expiresAtMs else { return false }
        let (limit, overflow) = expiresAtMs.addingReportingOverflow(keepStaleMs)
        return !overflow && limit <= nowMs
    }
}
