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
        // The resident set alone decides whether the heap's figures are read at all (reading
        // them takes the allocator's locks).
        #expect(!policy.mayBeWorthReturning(resident: 310 << 20))
        #expect(policy.mayBeWorthReturning(resident: 340 << 20))
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
        let freed = blocks.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        for block in freed { free(block) }
        // Counted page by page inside the freed blocks (their first and last pages may hold
        // the allocator's own records), so other tests' memory cannot blur the figure.
        let before = residentPages(inside: freed)
        #expect(before >= freed.count * 60, "the freed blocks stay resident: \(before) pages")
        #expect(FreedMemory.HeapFigures.current.free >= 60 << 20, "the freed blocks count as free heap")
        FreedMemory.returnNow()
        let after = residentPages(inside: freed)
        #expect(after <= before / 4, "resident pages inside the freed blocks: \(before) before, \(after) after")
    }

    /// How many pages strictly inside `blocks` (256 KiB each) are resident.
    func residentPages(inside blocks: [UnsafeMutableRawPointer]) -> Int {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        var resident = 0
        var flags = [UInt8](repeating: 0, count: (256 << 10) / page)
        for block in blocks {
            // The first whole page after the block's start, up to the last whole page before its end.
            let first = (Int(bitPattern: block) / page + 1) * page
            let end = (Int(bitPattern: block) + (256 << 10)) / page * page - page
            guard end > first, let start = UnsafeMutableRawPointer(bitPattern: first) else { continue }
            let count = (end - first) / page
            guard mincore(start, end - first, &flags) == 0 else { continue }
            resident += flags[..<count].count { $0 & 1 == 1 }
        }
        return resident
    }
}
