@testable import MonarchCoordinator
import Testing

@Suite struct FairQueueTests {
    @Test("Clients take turns: one with many waiting delays another's first element by one turn")
    func turns() {
        var queue = FairQueue<String>()
        for index in 0..<5 { queue.append("a\(index)", client: 1, ticket: index) }
        queue.append("b0", client: 2, ticket: 100)
        queue.append("c0", client: 3, ticket: 200)
        queue.append("b1", client: 2, ticket: 101)
        var order: [String] = []
        while let next = queue.popNext() { order.append(next) }
        #expect(order == ["a0", "b0", "c0", "a1", "b1", "a2", "a3", "a4"])
        #expect(queue.isEmpty)
    }

    @Test("An element can leave the queue by its ticket; a client left with nothing loses its turn")
    func removal() {
        var queue = FairQueue<String>()
        queue.append("a0", client: 1, ticket: 1)
        queue.append("b0", client: 2, ticket: 2)
        queue.append("a1", client: 1, ticket: 3)
        #expect(queue.remove(ticket: 2, client: 2) == "b0")
        #expect(queue.remove(ticket: 2, client: 2) == nil)
        #expect(queue.count == 2)
        #expect(queue.popNext() == "a0")
        #expect(queue.popNext() == "a1")
        #expect(queue.popNext() == nil)
        queue.append("c0", client: 3, ticket: 4)
        #expect(queue.removeAll() == ["c0"])
        #expect(queue.count == 0)
    }
}
