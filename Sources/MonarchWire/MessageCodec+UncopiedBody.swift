#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MessageCodec {
    /// The smallest raw body the ``appendFrameLeavingBody(_:to:)`` functions leave out of the
    /// frames they append: below it, copying the body beside the rest of its frame costs less
    /// than sending it on its own.
    public static let uncopiedBodyMinimum = 16 << 10

    /// Appends `message` as a whole frame to `output`, as ``appendFrame(_:to:)`` does, except
    /// that a raw body of at least ``uncopiedBodyMinimum`` bytes is not appended but returned:
    /// the frame is then whole once those bytes follow the ones appended. Returns nil when the
    /// frame was appended whole.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the payload, body included,
    ///   exceeds ``maxFrameBytes``; `output` is then unchanged.
    public func appendFrameLeavingBody(_ message: WireMessage, to output: inout [UInt8]) throws(FrameError) -> Data? {
        guard rawBodies, let body = RawBodyPayload.body(of: message), body.count >= Self.uncopiedBodyMinimum else {
            try appendFrame(message, to: &output)
            return nil
        }
        let start = output.count
        output.append(contentsOf: [0, 0, 0, 0])
        RawBodyPayload.appendHead(of: message, to: &output)
        let count = output.count - start - BigEndianLength.byteCount + body.count
        guard count <= maxFrameBytes, count <= Int(UInt32.max) else {
            output.removeSubrange(start...)
            throw .oversized(length: UInt32(clamping: count), limit: maxFrameBytes)
        }
        BigEndianLength.write(UInt32(count), into: &output, at: start)
        return body.bytes
    }

    /// Appends `prepared` answering request `id` as a whole frame to `output`, as
    /// ``appendFrame(_:answering:ageMs:to:)`` does, except that a raw body of at least
    /// ``uncopiedBodyMinimum`` bytes is not appended but returned: the frame is then whole once
    /// those bytes follow the ones appended. Returns nil when the frame was appended whole.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` as ``appendFrame(_:answering:ageMs:to:)``
    ///   does; `output` is then unchanged.
    public func appendFrameLeavingBody(
        _ prepared: PreparedResponse, answering id: MessageID, ageMs: UInt64? = nil, to output: inout [UInt8]
    ) throws(FrameError) -> Data? {
        guard let template = prepared.template(rawBodies: rawBodies), let body = template.rawBody,
            body.count >= Self.uncopiedBodyMinimum
        else {
            try appendFrame(prepared, answering: id, ageMs: ageMs, to: &output)
            return nil
        }
        try appendFrame(prepared, template: template, answering: id, ageMs: ageMs, to: &output, withBody: false)
        return body.bytes
    }
}
