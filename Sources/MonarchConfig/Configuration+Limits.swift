extension Configuration {
    /// Parses `limits`: `timeout` (a duration above zero) and `maxFrame` (a byte size from 1
    /// to ``maxFrameBytesLimit``); each absent one takes its standard value.
    static func parseLimits(_ node: ConfigNode) throws(ConfigError) -> (timeout: Duration, maxFrameBytes: Int) {
        let limits = try node.mapping(allowedKeys: ["timeout", "maxFrame"])
        let timeout = try limits.optional("timeout")?.positiveDuration() ?? standardTimeout
        var maxFrameBytes = standardMaxFrameBytes
        if let maxFrameNode = limits.optional("maxFrame") {
            maxFrameBytes = try maxFrameNode.byteSize()
            guard (1...maxFrameBytesLimit).contains(maxFrameBytes) else {
                throw maxFrameNode.error("must be between 1 byte and 256MiB, got \(maxFrameBytes) bytes")
            }
        }
        return (timeout, maxFrameBytes)
    }
}
