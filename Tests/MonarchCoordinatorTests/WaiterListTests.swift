@testable import MonarchCoordinator
import Testing

/// A flight's waiters: the first kept inline, those that join in a table.
@Suite struct WaiterListTests {
    private func waiter(startedTheTrip: Bool = false) -> Flight.Waiter {
        Flight.Waiter(deliver: { _ in }, timer: nil, startedTheTrip: startedTheTrip)
    }

    private func numbers(_ list: WaiterList) -> [Int] { list.map(\.number).sorted() }

    @Test func waitersComeAndGoByNumber() {
        var list = WaiterList()
        #expect(list.isEmpty)
        list.add(waiter(startedTheTrip: true), as: 7)
        #expect(!list.isEmpty)
        #expect(numbers(list) == [7])
        list.add(waiter(), as: 8)
        list.add(waiter(), as: 9)
        #expect(numbers(list) == [7, 8, 9])
        #expect(list.first { $0.number == 7 }?.waiter.startedTheTrip == true)

        // The first leaves while others wait; a later waiter does not take its place twice.
        #expect(list.remove(7)?.startedTheTrip == true)
        #expect(list.remove(7) == nil)
        #expect(numbers(list) == [8, 9])
        list.add(waiter(), as: 10)
        #expect(numbers(list) == [8, 9, 10])

        #expect(list.remove(42) == nil)
        for number in [8, 9, 10] { #expect(list.remove(number) != nil) }
        #expect(list.isEmpty)
        #expect(numbers(list) == [])

        // Emptied, it keeps the next first waiter inline again.
        list.add(waiter(), as: 11)
        #expect(numbers(list) == [11])
    }
}
