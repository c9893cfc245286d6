#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The next request after a redirect answer, per RFC 9110 §15.4: `301`, `302`, `303`,
/// `307` and `308` with a `Location` are followed; `303` turns every method but `HEAD` into a
/// `GET`, and so do `301` and `302` for a `POST` (as browsers and libcurl do); `307` and
/// `308` keep the method and the body. A `GET` made from another method drops the body and
/// the headers describing it; a redirect to another origin drops the credentials.
struct RedirectStep {
    /// The statuses that are followed.
    static let followed: Set<Int> = [301, 302, 303, 307, 308]

    var method: String
    var headers: [(name: String, value: String)]
    var body: Data?

    /// The request to send to `target` after `status` answered a request with `method`,
    /// `headers` and `body` sent to `source`.
    init(
        status: Int, from source: UpstreamURL, to target: UpstreamURL, method: String,
        headers: [(name: String, value: String)], body: Data?
    ) {
        self.method = method
        self.headers = headers
        self.body = body
        let becomesGet = (status == 303 && method != "HEAD") || ((status == 301 || status == 302) && method == "POST")
        if becomesGet {
            self.method = "GET"
            self.body = nil
            self.headers.removeAll { $0.name.lowercased().hasPrefix("content-") }
        }
        if source.scheme != target.scheme || source.origin != target.origin {
            let credentials: Set<String> = ["authorization", "cookie", "proxy-authorization"]
            self.headers.removeAll { credentials.contains($0.name.lowercased()) }
        }
    }
}
