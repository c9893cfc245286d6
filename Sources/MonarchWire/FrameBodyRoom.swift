/// How large a body one frame can carry to any peer: in base64 inside the JSON message (a
/// body of `B` bytes takes `4 * ceil(B / 3)` bytes of the frame, since a peer that did not
/// agree to `rawBodies` reads it so), with ``envelopeReserve`` kept back for everything else
/// (the message's other fields and its headers).
public enum FrameBodyRoom {
    /// The bytes of every frame kept back for the JSON envelope and the headers: 64 KiB.
    public static let envelopeReserve = 64 << 10

    /// The largest body, in bytes, whose base64 form and ``envelopeReserve`` fit in a frame of
    /// `maxFrameBytes`; 0 when none does. 12 533 760 for the protocol's default 16 MiB frame.
    public static func largestBody(fitting maxFrameBytes: Int) -> Int {
        let room = maxFrameBytes - envelopeReserve
        guard room >= 4 else { return 0 }
        return room / 4 * 3
    }
}
