/// The 4-byte big-endian lengths of the wire: a frame's header (protocol section 2) and the
/// length of a raw-body payload's JSON (section 2.1). For the framing here and the codec of
/// MonarchWire alike.
package enum BigEndianLength {
    /// The bytes a length takes.
    package static let byteCount = 4

    /// The length stored at `offset` in `bytes` (which holds at least 4 bytes from there).
    @inlinable
    package static func read(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    /// Appends `length` to `output`.
    @inlinable
    package static func append(_ length: UInt32, to output: inout [UInt8]) {
        withUnsafeBytes(of: length.bigEndian) { output.append(contentsOf: $0) }
    }

    /// Stores `length` at `offset` in `output`, over the 4 bytes there.
    @inlinable
    package static func write(_ length: UInt32, into output: inout [UInt8], at offset: Int) {
        withUnsafeBytes(of: length.bigEndian) { bytes in
            output.withUnsafeMutableBytes { UnsafeMutableRawBufferPointer(rebasing: $0[offset..<offset + byteCount]).copyMemory(from: bytes) }
        }
    }
}
