import MonarchLoop
import Testing

@Suite("LoopBound") struct LoopBoundTests {
    struct Table {
        var entries: [Int] = []
        var count = 0
    }

    @Test("Changes through value are made in place: the collection inside keeps its storage")
    func changesInPlace() async throws {
        try await withLoop { loop in
            let bound = LoopBound(Table(), loop: loop)
            let (before, after, entries, count) = try await loop.submit {
                bound.value.entries.reserveCapacity(64)
                bound.value.entries.append(1)
                let before = bound.value.entries.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
                for number in 2...32 {
                    bound.value.entries.append(number)
                    bound.value.count += 1
                }
                let after = bound.value.entries.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
                return (before, after, bound.value.entries, bound.value.count)
            }
            // A copy on each change (a get and a set) would have moved the entries every time.
            #expect(before == after)
            #expect(entries == Array(1...32))
            #expect(count == 31)
        }
    }

    @Test("Reading the value off its loop's thread stops the process")
    func offLoopReadStops() async {
        let exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = try EventLoop(name: "bound")
            let bound = LoopBound(7, loop: loop)
            // The test's thread is not the loop's.
            _ = bound.value
        }
        let said = exit.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(said.contains("must be called on the thread of event loop bound"))
    }

    @Test("Changing the value off its loop's thread stops the process")
    func offLoopChangeStops() async {
        let exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = try EventLoop(name: "bound")
            let bound = LoopBound([1, 2, 3], loop: loop)
            bound.value.append(4)
        }
        let said = exit.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(said.contains("must be called on the thread of event loop bound"))
    }
}
