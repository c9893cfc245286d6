import DequeModule

/// A queue shared by many clients, served in turns: each client's elements leave in the order
/// they came, and the clients take turns, one element each, so a client with thousands waiting
/// delays another's first element by at most one turn per waiting client.
struct FairQueue<Element> {
    private var queues: [Int: Deque<(ticket: Int, element: Element)>] = [:]
    /// The clients with elements waiting, the next to be served first.
    private var turns: Deque<Int> = []
    /// Elements waiting.
    private(set) var count = 0

    /// Whether nothing waits.
    var isEmpty: Bool { count == 0 }

    /// Adds `element` for `client`; `ticket` names it for ``remove(ticket:client:)``.
    mutating func append(_ element: Element, client: Int, ticket: Int) {
        if queues[client] == nil { turns.append(client) }
        queues[client, default: []].append((ticket, element))
        count += 1
    }

    /// Takes the oldest element of the client whose turn it is; that client's turn then
    /// passes to the back.
    mutating func popNext() -> Element? {
        guard let client = turns.popFirst() else { return nil }
        let (_, element) = queues[client]!.removeFirst()
        if queues[client]!.isEmpty {
            queues[client] = nil
        } else {
            turns.append(client)
        }
        count -= 1
        return element
    }

    /// Removes and returns the element `ticket` of `client`, if it still waits.
    mutating func remove(ticket: Int, client: Int) -> Element? {
        guard let index = queues[client]?.firstIndex(where: { $0.ticket == ticket }) else { return nil }
        let (_, element) = queues[client]!.remove(at: index)
        if queues[client]!.isEmpty {
            queues[client] = nil
            turns.removeAll { $0 == client }
        }
        count -= 1
        return element
    }

    /// Removes and returns every element, in turn order.
    mutating func removeAll() -> [Element] {
        var all: [Element] = []
        while let element = popNext() { all.append(element) }
        return all
    }
}
