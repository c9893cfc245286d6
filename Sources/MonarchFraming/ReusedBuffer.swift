/// How much storage an emptied byte buffer keeps for its next use.
///
/// Connections reuse their read, write and encoding buffers, so the common small frame costs
/// no allocation. A buffer that once held a large frame gives its storage back when it is
/// emptied: an idle connection holds a few small buffers, whatever it carried before.
public enum ReusedBuffer {
    /// The largest capacity an emptied buffer keeps: 64 KiB.
    public static let keptCapacity = 64 << 10
}

extension Array where Element == UInt8 {
    /// Empties the array, keeping its storage only when it is at most
    /// ``ReusedBuffer/keptCapacity`` bytes.
    @inlinable
    public mutating func removeAllKeepingSmallCapacity() {
        removeAll(keepingCapacity: capacity <= ReusedBuffer.keptCapacity)
    }
}
