/// Writes frames: a 4-byte big-endian length, then the payload.
public enum FrameEncoder {
    /// Appends one frame holding `payload` to `output`.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the payload is longer than
    ///   `maxFrameBytes`; `output` is then unchanged.
    public static func append(
        payload: some Collection<UInt8>,
        to output: inout [UInt8],
        maxFrameBytes: Int = FrameDecoder.defaultMaxFrameBytes
    ) throws(FrameError) {
        let count = payload.count
        guard count <= maxFrameBytes, count <= Int(UInt32.max) else {
            throw .oversized(length: UInt32(clamping: count), limit: maxFrameBytes)
        }
        output.reserveCapacity(output.count + 4 + count)
        BigEndianLength.append(UInt32(count), to: &output)
        output.append(contentsOf: payload)
    }

    /// Returns one frame holding `payload`.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the payload is longer than
    ///   `maxFrameBytes`.
    public static func frame(
        payload: some Collection<UInt8>,
        maxFrameBytes: Int = FrameDecoder.defaultMaxFrameBytes
    ) throws(FrameError) -> [UInt8] {
        var output: [UInt8] = []
        try append(payload: payload, to: &output, maxFrameBytes: maxFrameBytes)
        return output
    }
}
