import Foundation
import Monarch
import MonarchHTTP
import MonarchLoop
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
    /// its freshness by HTTP's rules, and its HTTP head but for what changes at each hit (a
    /// class: each hit shares it).
    final class Form: Sendable {
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
        /// The start of the hit's `Cache-Status` line, up to Monarch's own entry: the name, and
        /// the answer's own value and `, ` when it has one; nil when that value could split the
        /// response (the line is then left out, as ``HTTPResponseHead`` leaves out any such line).
        let cacheStatusLineStart: [UInt8]?

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
            let cacheStatus = headers["cache-status"]
            self.cacheStatus = cacheStatus
            if let cacheStatus {
                var line: [UInt8] = []
                HTTPResponseHead.append(HTTPHeader(name: "Cache-Status", value: cacheStatus + ", "), to: &line)
                cacheStatusLineStart = line.isEmpty ? nil : Array(line.dropLast(2))
            } else {
                cacheStatusLineStart = Array("Cache-Status: ".utf8)
            }
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
        /// The body as the hot tier holds it for sending uncopied (``HotTier/Entry/sharedBody``);
        /// nil to copy it from ``prepared``.
        var sharedBody: SharedBytes? = nil

        /// How long it stays fresh from now, in seconds (the `ttl` of its `Cache-Status`).
        private var ttlLeft: Int64 { (form.lifetime ?? 0) - form.age(heldMs: ageMs) }

        /// The `Cache-Status` of the hit: the one the answer arrived with, then Monarch's.
        private var cacheStatus: String {
            let own = "monarch; hit; ttl=\(ttlLeft)"
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
        /// was kept; `Connection: close` when `closing`. A body the hot tier holds for sending
        /// uncopied follows the head as it is held.
        func httpResponse(closing: Bool) -> HTTPOutput {
            let body = sharedBody == nil ? prepared.message.content?.bytes ?? Data() : Data()
            let bodyCount = sharedBody?.count ?? body.count
            var out: [UInt8] = []
            out.reserveCapacity(form.head.count + 160 + body.count)
            out.append(contentsOf: form.head)
            // The lines added here hold only what this code writes (digits, Monarch's own
            // status, the date), so none needs the check an upstream's line gets.
            let age = form.age(heldMs: ageMs)
            out.append(contentsOf: "Age: ".utf8)
            Self.appendNumber(age, to: &out)
            if let start = form.cacheStatusLineStart {
                out.append(contentsOf: start)
                out.append(contentsOf: "monarch; hit; ttl=".utf8)
                Self.appendNumber(ttlLeft, to: &out)
            }
            // Wall-clock time: the `Date` header is shown to the client.
            if form.needsDate {
                out.append(contentsOf: "Date: ".utf8)
                out.append(contentsOf: HTTPDate.now().utf8)
                out.append(contentsOf: "\r\n".utf8)
            }
            out.append(contentsOf: "Content-Length: ".utf8)
            Self.appendNumber(Int64(bodyCount), to: &out)
            if closing { out.append(contentsOf: "Connection: close\r\n".utf8) }
            out.append(contentsOf: "\r\n".utf8)
            if let sharedBody { return HTTPOutput(head: out, body: sharedBody) }
            body.withUnsafeBytes { out.append(contentsOf: $0) }
            return HTTPOutput(out)
        }

        /// Appends `value` in decimal and the line's CRLF.
        private static func appendNumber(_ value: Int64, to out: inout [UInt8]) {
            if value < 0 { out.append(UInt8(ascii: "-")) }
            let magnitude = value.magnitude
            MessageCodec.appendDecimal(magnitude, digits: MessageCodec.decimalDigits(of: magnitude), to: &out)
            out.append(contentsOf: "\r\n".utf8)
        }
    }
}
