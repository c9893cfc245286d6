/// Bytes that never change once made, shared by every write that sends them: a stream sends
/// them without copying them (``StreamConnection/write(_:then:)``), and they live as long as
/// the last holder, a write still under way included.
public final class SharedBytes: @unchecked Sendable {
    // Sendable by construction: the memory is written once, in the initializer, and only read
    // after; it is freed when the last reference goes.
    private let storage: UnsafeMutableRawBufferPointer

    /// A copy of `source`.
    public init(copying source: UnsafeRawBufferPointer) {
        storage = .allocate(byteCount: source.count, alignment: 16)
        if let base = source.baseAddress { storage.baseAddress!.copyMemory(from: base, byteCount: source.count) }
    }

    deinit { storage.deallocate() }

    /// How many bytes.
    public var count: Int { storage.count }

    /// The bytes, valid while this object lives.
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(storage) }
}
