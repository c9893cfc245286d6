/// How a network provider fetches: where it may go, how long it waits, how often it retries,
/// how far it follows redirects and how much it accepts.
public struct NetworkConfiguration: Sendable, Hashable {
    /// The upstreams that may be contacted (empty: none).
    public var allowlist: UpstreamAllowlist
    /// How long connecting may take (capped by the request's deadline).
    public var connectTimeout: Duration
    /// How long a request with no deadline may take in all (attempts, waits and redirects).
    public var defaultTimeout: Duration
    /// When failed exchanges are tried again.
    public var retry: RetryPolicy
    /// Redirects followed per request, at most; one more is a `tooManyRedirects` failure.
    public var maxRedirects: Int
    /// The largest response body accepted, in bytes (after content decoding); a provider
    /// also caps it at the largest body a frame to the coordinator carries
    /// (``NetworkProvider/limitBodies(toFitFrameBodiesOf:)``).
    public var maxResponseBytes: Int

    /// The default for ``maxResponseBytes``: 12 533 760 bytes, the largest body that fits, in
    /// base64, in a frame of the protocol's default 16 MiB with 64 KiB kept for the rest of
    /// the message (headers included).
    public static let defaultMaxResponseBytes = 12_533_760

    /// Creates a configuration; defaults: connect timeout 5 s, default timeout 30 s, 2
    /// retries, 5 redirects, ``defaultMaxResponseBytes``.
    public init(
        allowlist: UpstreamAllowlist, connectTimeout: Duration = .seconds(5), defaultTimeout: Duration = .seconds(30),
        retry: RetryPolicy = RetryPolicy(), maxRedirects: Int = 5, maxResponseBytes: Int = defaultMaxResponseBytes
    ) {
        self.allowlist = allowlist
        self.connectTimeout = connectTimeout
        self.defaultTimeout = defaultTimeout
        self.retry = retry
        self.maxRedirects = max(0, maxRedirects)
        self.maxResponseBytes = maxResponseBytes
    }
}
