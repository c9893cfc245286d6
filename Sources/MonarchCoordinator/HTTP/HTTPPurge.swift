#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
import MonarchConfig
import MonarchHTTP
import MonarchLoop
import MonarchWire

/// Who is at the other end of an HTTP connection, as `PURGE`'s rule (`http.purgeFrom`) asks.
enum HTTPPeer: Sendable, Equatable, CustomStringConvertible {
    /// A connection to a Unix socket listener.
    case unixSocket
    /// A TCP connection from this IP address; nil when it could not be told (the peer had
    /// gone already), which no rule admits.
    case tcp(host: String?)

    /// The peer of `connection`, read now (loop thread).
    init(of connection: StreamConnection) {
        self = connection.transport == .tcp ? .tcp(host: connection.peerHost) : .unixSocket
    }

    /// `unix socket`, `127.0.0.1`, `an unknown address`.
    var description: String {
        switch self {
        case .unixSocket: "a Unix socket"
        case .tcp(let host?): host
        case .tcp(nil): "an unknown address"
        }
    }
}

/// `PURGE` on the HTTP front door: drops the cached entries of the request's path (as
/// `monarch invalidate PATH` does, but routed for the request's `Host` too, so that the
/// entries of a route with that host are the ones dropped), or, with `Surrogate-Key: a b c`, those tagged with any of
/// the keys (separated by spaces or commas, as upstreams' tags are), one after another (the
/// first that fails ends the purge); with `Monarch-Soft-Purge: 1`, marks them stale instead
/// (an `invalidate` with `soft`), so they may still be served stale where a policy allows and
/// are revalidated. Either way the hot tier drops them and watchers hear `invalidated`.
///
/// Only peers `http.purgeFrom` lists may purge (the list in force, reloads included); others
/// get 403 naming the key. The answer is JSON: `{"status":"ok","removed":N,"workers":M,
/// "targets":[…]}` (plus `markedStale` for a soft purge); 200 also when nothing was cached.
/// A failure is answered with its code in `Monarch-Error` (and in the body): 400 for a bad
/// path or header, 404 for a path no route matches, 413 for a target over
/// `limits.invalidateBytes`, 503 when no cache worker is connected, 502 when some cache
/// workers did not answer.
enum HTTPPurge {
    /// The method.
    static let method = "PURGE"
    /// The header that asks for a soft purge: `1` (soft) or `0` (not).
    static let softHeader = "Monarch-Soft-Purge"
    /// The header naming tags to purge instead of the path.
    static let surrogateKeyHeader = "Surrogate-Key"
    /// The most surrogate keys one `PURGE` may name (each one is an invalidation on every
    /// cache worker).
    static let maxSurrogateKeys = 256

    /// What one `PURGE` did, as its answer's body says it.
    struct Report: Encodable, Equatable {
        /// `ok`, or the failure code.
        var status = "ok"
        /// Entries removed on every cache worker, summed.
        var removed = 0
        /// Soft purges: entries made stale, summed; absent otherwise.
        var markedStale: Int?
        /// Cache workers that answered (the most of any target).
        var workers = 0
        /// The keys or tags purged.
        var targets: [String] = []
        /// What went wrong, when something did.
        var message: String?
    }

    /// The HTTP answer to `request`, a `PURGE` from `peer`, with `Connection: close` when
    /// `closing` or once the coordinator drains: refused (403) unless `http.purgeFrom` admits
    /// the peer, else what the coordinator's invalidation did.
    @CoordinatorActor
    static func answer(_ request: HTTPRequest, from peer: HTTPPeer, coordinator: Coordinator, closing: Bool) async -> [UInt8] {
        let answer = await purge(request, from: peer, coordinator: coordinator)
        let close = closing || coordinator.draining
        switch answer {
        case .refused(let status, let text, let code):
            return HTTPExchange.plain(status, text, code: code, closing: close)
        case .report(let status, let report):
            let code = report.status == "ok" ? nil : report.status
            let extra = status == 503 ? [HTTPHeader(name: "Retry-After", value: "1")] : []
            return json(status, report, code: code, closing: close, extra: extra)
        }
    }

    /// How a `PURGE` is answered.
    enum Answer: Equatable {
        /// Refused before anything was purged: the status, why, the failure code.
        case refused(Int, String, code: String)
        /// Purged (or failed part way): the status and the report.
        case report(Int, Report)
    }

    /// Runs the purge `request` asks for, if `peer` may.
    @CoordinatorActor
    static func purge(_ request: HTTPRequest, from peer: HTTPPeer, coordinator: Coordinator) async -> Answer {
        let rule = coordinator.routing.configuration.http
        let allowed = switch peer {
        case .unixSocket: rule.allowsPurgeFromUnixSockets
        case .tcp(let host?): rule.allowsPurge(fromHost: host)
        case .tcp(nil): false
        }
        guard allowed else {
            let why = rule.purgeFrom.isEmpty
                ? "PURGE is not allowed: http.purgeFrom lists nobody (add the addresses that may purge, or unix)"
                : "PURGE is not allowed from \(peer): http.purgeFrom lists who may purge"
            return .refused(403, why, code: "forbidden")
        }
        let targets: [CacheTarget]
        let soft: Bool
        switch parse(request) {
        case .failure(let refusal): return .refused(400, refusal.message, code: "invalidRequest")
        case .success(let parsed): (targets, soft) = parsed
        }
        var report = Report(markedStale: soft ? 0 : nil)
        var failure: (code: FailureCode, message: String)?
        let host = request.host
        for target in targets {
            switch await coordinator.invalidate(InvalidateMessage(id: 0, target: target, soft: soft), host: host) {
            case .result(let result):
                report.removed += integer(result.data?["removed"])
                if soft { report.markedStale = (report.markedStale ?? 0) + integer(result.data?["markedStale"]) }
                report.workers = max(report.workers, integer(result.data?["workers"]))
                if case .array(let resolved)? = result.data?["targets"] {
                    for case .string(let text) in resolved { report.targets.append(text) }
                }
            case .failure(let refusal):
                // The first failure is answered; the targets after it are not purged.
                failure = (refusal.error.code, refusal.error.message)
            default:
                failure = (.invalidRequest, "the coordinator gave no result")
            }
            if failure != nil { break }
        }
        guard let failure else { return .report(200, report) }
        report.status = failure.code.rawValue
        report.message = failure.message
        return .report(status(of: failure.code), report)
    }

    /// A request that cannot be a purge, and why.
    struct Refusal: Error, Equatable {
        var message: String
    }

    /// The targets `request` names (its path, or its surrogate keys as tags) and whether it
    /// asks for a soft purge.
    static func parse(_ request: HTTPRequest) -> Result<(targets: [CacheTarget], soft: Bool), Refusal> {
        let softValues = request.values(of: softHeader)
        let softValue = softValues.first ?? "0"
        guard softValues.count <= 1, softValue == "0" || softValue == "1" else {
            return .failure(Refusal(message: "\(softHeader) is 1 (mark stale) or 0 (remove), once"))
        }
        let keyLines = request.values(of: surrogateKeyHeader)
        guard !keyLines.isEmpty else { return .success(([.path(request.target)], softValue == "1")) }
        var keys: [String] = []
        for line in keyLines {
            // Tags are split on spaces and commas where upstreams give them, so no tag holds either.
            for key in line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }).map(String.init)
            where !keys.contains(key) {
                keys.append(key)
            }
        }
        guard !keys.isEmpty else {
            return .failure(Refusal(message: "\(surrogateKeyHeader) names no key (keys are separated by spaces or commas)"))
        }
        guard keys.count <= maxSurrogateKeys else {
            return .failure(Refusal(message: "\(surrogateKeyHeader) names \(keys.count) keys; one PURGE takes at most \(maxSurrogateKeys)"))
        }
        return .success((keys.map { .tag($0) }, softValue == "1"))
    }

    /// The HTTP status of a purge that failed with `code`.
    static func status(of code: FailureCode) -> Int {
        switch code.rawValue {
        case "noRoute": 404
        case "invalidPath", "invalidRequest", "unknownDomain": 400
        case "requestTooLarge": 413
        case "forbidden": 403
        case "unavailable", "overloaded", "shuttingDown": 503
        default: 502
        }
    }

    private static func integer(_ value: JSONValue?) -> Int {
        if case .integer(let count)? = value { Int(count) } else { 0 }
    }

    /// A JSON answer holding `report`, with `Monarch-Error: code` when given.
    private static func json(
        _ status: Int, _ report: Report, code: String? = nil, closing: Bool, extra: [HTTPHeader] = []
    ) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // A report of strings and integers always encodes.
        let body = Array((try? encoder.encode(report)) ?? Data("{}".utf8)) + [UInt8(ascii: "\n")]
        var headers = [
            HTTPHeader(name: "Content-Type", value: "application/json"),
            HTTPHeader(name: "Content-Length", value: String(body.count)),
            HTTPHeader(name: "Date", value: HTTPDate.now()),  // wall-clock time, sent to the client
            HTTPHeader(name: "Cache-Control", value: "no-store"),
        ]
        if let code { headers.append(HTTPHeader(name: "Monarch-Error", value: code)) }
        headers += extra
        if closing { headers.append(HTTPHeader(name: "Connection", value: "close")) }
        return HTTPResponseHead(status: status, headers: headers).bytes + body
    }
}
