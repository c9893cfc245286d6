import MonarchLoop

/// An HTTP response as the front door writes it: its bytes, then, for a large hot-tier body,
/// that body as the hot tier holds it, sent without a copy (``StreamConnection/write(_:then:)``).
struct HTTPOutput {
    /// The response, or its head when ``sharedBody`` follows.
    var bytes: [UInt8]
    /// The body, when it is sent from where the hot tier holds it; nil when ``bytes`` is all.
    var sharedBody: SharedBytes?

    /// A response held whole in `bytes`.
    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// A head, and the body that follows it.
    init(head: [UInt8], body: SharedBytes) {
        bytes = head
        sharedBody = body
    }

    /// The whole response in one array.
    var joined: [UInt8] {
        guard let sharedBody else { return bytes }
        return bytes + sharedBody.bytes
    }
}
