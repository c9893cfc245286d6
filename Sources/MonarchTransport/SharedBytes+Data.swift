#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MonarchLoop
import MonarchWire

extension SharedBytes {
    /// The bytes of `data`, not copied when there are more than a few: those a `Data` keeps in
    /// a heap block of its own, which stays where it is, unchanged, while the result holds
    /// `data` (a change made through another copy of `data` copies the block first). A few
    /// bytes, which a `Data` may keep within itself, are copied.
    public static func holding(_ data: Data) -> SharedBytes {
        data.withUnsafeBytes { bytes in
            bytes.count < 64 ? SharedBytes(copying: bytes) : SharedBytes(borrowing: bytes, from: data)
        }
    }
}

extension MessageCodec {
    /// Appends `message`'s frame to `output` as ``appendFrameLeavingBody(_:to:)`` does, and
    /// returns the body it left out held for the stream, uncopied: the frame's last bytes, to
    /// be written right after `output`; nil when `output` holds the whole frame.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the payload exceeds the frame limit.
    func appendFrameHoldingBody(_ message: WireMessage, to output: inout [UInt8]) throws(FrameError) -> SharedBytes? {
        try appendFrameLeavingBody(message, to: &output).map(SharedBytes.holding)
    }

    /// As ``appendFrameHoldingBody(_:to:)``, for `prepared` sent as the response to `id`
    /// (``appendFrameLeavingBody(_:answering:ageMs:to:)``).
    func appendFrameHoldingBody(
        _ prepared: PreparedResponse, answering id: MessageID, ageMs: UInt64?, to output: inout [UInt8]
    ) throws(FrameError) -> SharedBytes? {
        try appendFrameLeavingBody(prepared, answering: id, ageMs: ageMs, to: &output).map(SharedBytes.holding)
    }
}
