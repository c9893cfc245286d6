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

    /// A block for a payload of `length` bytes of which `arrived` have arrived (and are about to
    /// be filled in).
    init(length: Int, arrived: Int) {
        self.length = length
        self.room = Self.room(forArrived: arrived, length: length)
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

    /// The room a block may have whatever has arrived: a payload up to this long never grows
    /// (growing a block copies it, unless the allocator moves its pages).
    static let freeRoom = 256 << 10

    /// The room for a payload of which `count` bytes have arrived: four times that, at least
    /// ``freeRoom``, never more than its length; so a block holds about what has arrived, and a
    /// large payload grows but once or twice.
    static func room(forArrived count: Int, length: Int) -> Int {
        min(length, max(4 * count, freeRoom))
    }

    /// Adds as many bytes of `source` as the payload still lacks; returns how many it took.
    /// Bytes read into ``spareRoom()`` are taken where they lie.
    func fill(from source: UnsafeRawBufferPointer) -> Int {
        let taken = min(source.count, length - count)
        guard taken > 0 else { return 0 }
        if source.baseAddress == UnsafeRawPointer(memory + count), count + taken <= room {
            count += taken
            return taken
        }
        makeRoom(for: count + taken)
        (memory + count).copyMemory(from: source.baseAddress!, byteCount: taken)
        count += taken
        return taken
    }

    /// The room after the bytes that have arrived, up to the payload's end, for a read to land
    /// in (then handed to ``fill(from:)``); grown first when there is none, by the same rule.
    func spareRoom() -> UnsafeMutableRawBufferPointer {
        makeRoom(for: min(length, count + Self.readSize))
        return UnsafeMutableRawBufferPointer(start: memory + count, count: min(room, length) - count)
    }

    /// How much a read asks for at least, as the loop's shared read buffer does.
    static let readSize = 64 << 10

    /// Grows the block, when it must, to hold `total` bytes.
    private func makeRoom(for total: Int) {
        guard total > room else { return }
        let grown = Self.room(forArrived: total, length: length)
        guard let moved = realloc(memory, grown) else { fatalError("out of memory for a frame of \(length) bytes") }
        memory = moved
        room = grown
    }
}
