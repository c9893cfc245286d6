/// What the metrics listener serves besides its connections' rules (``MetricsEndpoint``):
/// `/metrics` (Prometheus's text format), `/livez` (200 while the process serves), `/readyz`
/// (200 when ready, else 503 saying why) and `/status` (the report `monarch status --json`
/// prints).
struct AdminPages: Sendable {
    /// One answer: its status line's code and reason, its body and its type.
    struct Page: Sendable, Equatable {
        /// `200 OK`, `503 Service Unavailable`.
        var status: String
        /// The body (sent for `GET`, left out for `HEAD`).
        var body: [UInt8]
        /// The body's `Content-Type`.
        var contentType: String
    }

    /// The paths served, as a request's target names them (before any `?`).
    static let paths = ["/metrics", "/livez", "/readyz", "/status"]

    /// The text of every metric, brought up to date.
    let metrics: @Sendable () async -> [UInt8]
    /// Why the coordinator should take no traffic now, or nil when it is ready.
    let unreadiness: @Sendable () async -> String?
    /// The status report as JSON; nil when it cannot be encoded.
    let status: @Sendable () async -> [UInt8]?

    /// The page at `path` (one of ``paths``; nil for another).
    func page(at path: String) async -> Page? {
        let text = "text/plain; charset=utf-8"
        switch path {
        case "/metrics":
            return Page(status: "200 OK", body: await metrics(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        case "/livez":
            return Page(status: "200 OK", body: Array("ok\n".utf8), contentType: text)
        case "/readyz":
            guard let reason = await unreadiness() else { return Page(status: "200 OK", body: Array("ready\n".utf8), contentType: text) }
            return Page(status: "503 Service Unavailable", body: Array("not ready: \(reason)\n".utf8), contentType: text)
        case "/status":
            guard let json = await status() else {
                return Page(
                    status: "500 Internal Server Error", body: Array("the status report could not be encoded as JSON\n".utf8),
                    contentType: text)
            }
            return Page(status: "200 OK", body: json, contentType: "application/json")
        default:
            return nil
        }
    }
}
