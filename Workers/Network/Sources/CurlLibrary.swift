import CCurl

/// libcurl as a whole: its one-time global set-up and its version.
public enum CurlLibrary {
    private static let initialized: Bool = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
    }()

    /// Runs `curl_global_init` the first time it is called, from any thread (later calls do
    /// nothing) and returns whether libcurl initialised. Call it at process start, before any
    /// other thread uses libcurl; ``CurlMulti`` calls it too.
    @discardableResult
    public static func initialize() -> Bool { initialized }

    /// libcurl's version line (`libcurl/7.88.1 OpenSSL/3.0 zlib/1.2 nghttp2/1.52`).
    public static var version: String { String(cString: curl_version()) }
}
