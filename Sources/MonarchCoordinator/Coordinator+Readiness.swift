#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MonarchWire

// What the metrics listener's admin pages ask of the coordinator (see ``AdminPages``).
extension Coordinator {
    /// Why the coordinator should take no new traffic now, or nil when it should: it drains, or
    /// a pool that a domain's chain (of the configuration in force) needs has no worker taking
    /// requests (`pool network has no worker`; several are joined with `; `).
    func unreadiness() -> String? {
        if draining { return "the coordinator is draining (it is stopping)" }
        var needed: [String] = []
        for domain in routing.configuration.domains {
            for kind in domain.providers where !needed.contains(kind) { needed.append(kind) }
        }
        let missing = needed.filter { pools[$0]?.serving.isEmpty ?? true }
        guard !missing.isEmpty else { return nil }
        return missing.map { "pool \($0) has no worker" }.joined(separator: "; ")
    }

    /// The status report as `monarch status --json` prints it (keys sorted, one line), with
    /// each cache worker's shared store when the cache keeps one (asked as `status` does). Loop
    /// thread.
    ///
    /// - Returns: the JSON and a line break; nil when the report cannot be encoded (a number
    ///   JSON cannot hold).
    func statusJSON() async -> [UInt8]? {
        let report = hasSharedCacheStore ? await statusReportWithStores() : statusReport()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let json = try? encoder.encode(report) else { return nil }
        return Array(json) + [UInt8(ascii: "\n")]
    }
}
