import Foundation
import Monarch
import MonarchHTTP
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

    /// What a relayed hit needs of a held answer, worked out once when the hot tier keeps it:
    /// its freshness by HTTP's rules, and its HTTP head but for what changes at each hit.
    struct Form: Sendable {
        /// The route TTL (the lifetime of an answer that gives none) the form was worked out
        /// with: a request of a route with another one works its freshness out anew.
        let defaultLifetime: Duration?
        /// Its `Age` when it was kept, in seconds.
        let ageOnReceipt: Int64
        /// How long it stays fresh, in seconds; nil when it may never answer without a
        /// validation (`no-cache`).
        let lifetime: Int64?
        /// The HTTP head of a plain `GET`'s answer (``HTTPExchange/headLines(of:)``): the status line and
        /// its header lines but `Age`, `Cache-Status`, `Content-Length` and `Connection`, with
        /// `Via` and, when the answer has one, `Date`; no empty line.
        let head: [UInt8]
        /// Whether the answer has no `Date` of its own (each hit then gives the time it is sent).
        let needsDate: Bool
        /// The `Cache-Status` the answer arrived with, which the hit's own follows.
        let cacheStatus: String?

        /// The form of `message`, kept at `nowMs` (wall clock) when it was `ageMs` old,
        /// for a route whose TTL is `defaultLifetime`.
        init(of message: ResponseMessage, ageMs: UInt64, nowMs: Int64, defaultLifetime: Duration?) {
            let headers = message.headers ?? [:]
            self.defaultLifetime = defaultLifetime
            ageOnReceipt = HTTPCacheRules.ageHeader(headers)
            if HTTPCacheRules.controls(of: headers).directives.has("no-cache") {
                lifetime = nil
            } else {
                let age = ageOnReceipt + Int64(ageMs / 1000)
                lifetime = HTTPCacheRules.freshnessLifetime(
                    headers: headers, status: message.status, receivedAt: nowMs / 1000 - age, defaultLifetime: defaultLifetime)
            }
            let lines = HTTPExchange.headLines(of: headers.filter { name, _ in name != "age" && name != "cache-status" })
            head = lines.headers.reduce(into: HTTPResponseHead.statusLine(message.status)) { HTTPResponseHead.append($1, to: &$0) }
            needsDate = !lines.hasDate
            cacheStatus = headers["cache-status"]
        }

        /// How old the answer is, in seconds, once held `ageMs`.
        func age(heldMs ageMs: UInt64) -> Int64 { ageOnReceipt + Int64(ageMs / 1000) }

        /// Whether it is fresh once held `ageMs`.
        func isFresh(heldMs ageMs: UInt64) -> Bool {
            guard let lifetime else { return false }
            return lifetime > age(heldMs: ageMs)
        }
    }

    /// A hot hit answering a relayed request: the held answer, its form and its age.
    struct Hit: Sendable {
        /// The answer held.
        let prepared: PreparedResponse
        /// What HTTP needs of it.
        let form: Form
        /// How long the hot tier has held it, as the cache worker counts.
        let ageMs: UInt64
        /// The request answered.
        let id: MessageID

        /// The `Cache-Status` of the hit: the one the answer arrived with, then Monarch's.
        private var cacheStatus: String {
            let own = "monarch; hit; ttl=\((form.lifetime ?? 0) - form.age(heldMs: ageMs))"
            return form.cacheStatus.map { $0 + ", " + own } ?? own
        }

        /// The answer as a response message to request ``id``, as a cache worker's hit would be
        /// answered to a relayed request: its `Age` now and its `Cache-Status` a hit.
        var message: ResponseMessage {
            var answer = prepared.message
            answer.id = id
            var headers = answer.headers ?? [:]
            headers["age"] = String(form.age(heldMs: ageMs))
            headers["cache-status"] = cacheStatus
            answer.headers = headers
            answer.ageMs = ageMs
            return answer
        }

        /// The whole HTTP response to a `GET` with no conditions and no range, for an answer
        /// with a body (not 1xx, 204 or 304: ``HTTPExchange`` answers those from ``message``):
        /// what ``HTTPExchange`` would write for ``message``, from the head worked out when it
        /// was kept; `Connection: close` when `closing`.
        func httpResponse(closing: Bool) -> [UInt8] {
            let body = prepared.message.content?.bytes ?? Data()
            var out = form.head
            out.reserveCapacity(out.count + 160 + body.count)
            func line(_ name: String, _ value: String) { HTTPResponseHead.append(HTTPHeader(name: name, value: value), to: &out) }
            line("Age", String(form.age(heldMs: ageMs)))
            line("Cache-Status", cacheStatus)
            if form.needsDate { line("Date", HTTPDate.now()) }
            line("Content-Length", String(body.count))
            if closing { line("Connection", "close") }
            out.append(contentsOf: "\r\n".utf8)
            body.withUnsafeBytes { out.append(contentsOf: $0) }
            return out
        }
    }
}
