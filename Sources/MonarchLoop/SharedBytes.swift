/// Bytes that never change once made, shared by every write that sends them: a stream sends
/// them without copying them (``StreamConnection/write(_:then:)``), and they live as long as
/// the last holder, a write still under way included.
public final class SharedBytes: @unchecked Sendable {
    // Sendable by construction: the memory is written once, in the initializer (or belongs to
    // `owner`, which never changes it), and only read after; it is freed (or `owner` let go)
    // when the last reference goes.
    private let storage: UnsafeRawBufferPointer
    /// What keeps borrowed bytes alive; nil when the bytes are this object's own.
    private let owner: (any Sendable)?

    /// A copy of `source`.
    public init(copying source: UnsafeRawBufferPointer) {
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: source.count, alignment: 16)
        if let base = source.baseAddress { copy.baseAddress!.copyMemory(from: base, byteCount: source.count) }
        storage = UnsafeRawBufferPointer(copy)
        owner = nil
    }

    /// The bytes at `bytes`, not copied: `owner` holds them, and they must stay where they are,
    /// unchanged, for as long as `owner` lives. This object keeps `owner` alive as long as it
    /// lives itself.
    public init(borrowing bytes: UnsafeRawBufferPointer, from owner: some Sendable) {
        storage = bytes
        self.owner = owner
    }

    deinit {
        if owner == nil { storage.deallocate() }
    }

    /// How many bytes.
    public var count: Int { storage.count }

    /// The bytes, valid while this object lives.
    public var bytes: UnsafeRawBufferPointer { storage }
}
