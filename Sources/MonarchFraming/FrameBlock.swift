#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The payload of a large frame in a block of memory of its own, which the decoder that filled
/// it gives up (``FrameDecoder/nextFrame(_:)-(_)``): what is made of the payload (a message's
/// body) may keep the block, and the payload's bytes where they lie, instead of copying them.
/// The bytes never change once the frame is complete; the memory is freed with the block.
public final class FrameBlock: @unchecked Sendable {
    // Sendable by construction: only the decoder that made the block writes to it, before it
    // hands the complete block over; after that it is only read.
    private var memory: UnsafeMutableRawPointer
    /// How many bytes ``memory`` has room for.
    private var room: Int
    /// The payload's length, as its header announced it.
    let length: Int
    /// How many of its bytes have arrived.
    private(set) var count = 0

    /// A block for a payload of `length` bytes, with room for `room` of them to begin with.
    init(length: Int, room: Int) {
        self.length = length
        self.room = min(max(room, 1), length)
        // malloc's, so that growing it moves large blocks by remapping their pages, not copying.
        guard let memory = malloc(self.room) else { fatalError("out of memory for a frame of \(length) bytes") }
        self.memory = memory
    }

    deinit { free(memory) }

    /// Whether every byte of the payload has arrived.
    var isComplete: Bool { count == length }

    /// The payload's bytes that have arrived (all of them once complete), valid while the block
    /// lives.
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: memory, count: count) }

    /// Adds as many bytes of `source` as the payload still lacks; returns how many it took.
    /// The room grows to twice the bytes held at most (never past the announced length), so
    /// the block only ever holds about what has arrived.
    func fill(from source: UnsafeRawBufferPointer) -> Int {
        let taken = min(source.count, length - count)
        guard taken > 0 else { return 0 }
        if count + taken > room {
            let grown = min(length, max(2 * (count + taken), room))
            guard let moved = realloc(memory, grown) else { fatalError("out of memory for a frame of \(length) bytes") }
            memory = moved
            room = grown
        }
        (memory + count).copyMemory(from: source.baseAddress!, byteCount: taken)
        count += taken
        return taken
    }
}
