#if canImport(Glibc)
import Glibc
#endif
import MonarchLoop
import Testing

@Suite struct FreedMemoryTests {
    @Test("Memory is given back only when enough lies free and the process grew since it was last given back")
    func policy() {
        var policy = FreedMemory.Policy(threshold: 32 << 20)
        #expect(!policy.shouldReturn(.init(free: 10 << 20, resident: 500 << 20)), "little is free")
        #expect(policy.shouldReturn(.init(free: 200 << 20, resident: 500 << 20)))
        policy.returned(residentAfter: 300 << 20)
        // What was given back still counts as free: no second walk until the process grows.
        #expect(!policy.shouldReturn(.init(free: 200 << 20, resident: 310 << 20)))
        #expect(policy.shouldReturn(.init(free: 200 << 20, resident: 340 << 20)))
    }

    @Test("Large blocks freed between live ones stay resident until memory is given back")
    func givesBackFragmentedFreeMemory() throws {
        ProcessSetup.keepLargeBuffersInTheHeap()
        // 128 MiB of 256 KiB blocks, every other one freed: the freed half lies between live
        // blocks, so the heap's top cannot shrink over it.
        var blocks: [UnsafeMutableRawPointer] = []
        for _ in 0..<512 {
            let block = try #require(malloc(256 << 10))
            memset(block, 1, 256 << 10)
            blocks.append(block)
        }
        defer { for block in blocks.enumerated() where block.offset % 2 == 1 { free(block.element) } }
        for block in blocks.enumerated() where block.offset % 2 == 0 { free(block.element) }
        let before = try #require(FreedMemory.residentBytes())
        let figures = FreedMemory.HeapFigures.current
        #expect(figures.free >= 60 << 20, "the freed blocks count as free heap: \(figures.free >> 20) MiB")
        let after = FreedMemory.returnNow()
        #expect(before - after.resident >= 48 << 20, "resident \(before >> 20) MiB before, \(after.resident >> 20) MiB after")
    }
}
