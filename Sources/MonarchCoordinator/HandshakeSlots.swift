import Monarch

/// Connections that have not said hello yet, so that strangers cannot keep anyone else out.
///
/// Each door class (client connections on Unix sockets, client connections over TCP, worker
/// connections) has slots of its own, ``capacity`` each, so a flood at one door never takes
/// another's. Within a class a TCP peer (an IP address) keeps at most ``perPeer`` handshakes
/// that have waited ``grace`` or more (Unix-socket connections, all of this machine, are held
/// to the class's capacity alone: the workers the coordinator starts come that way). A new
/// connection is never turned away for want of a slot: when its peer holds its share, that
/// peer's longest-waiting handshake makes room once it has waited ``grace`` (a client opening
/// many connections at once has them all, up to the capacity); when the class is full, the
/// longest-waiting handshake of the peer holding the most does. A client says hello within
/// milliseconds, so what is pushed out is what waited longest for nothing. Waits are measured
/// on the clock it is given. Loop thread only (a value the coordinator keeps).
struct HandshakeSlots<Ticket: Hashable> {
    /// A door class.
    enum DoorClass: Hashable {
        case unixClients, tcpClients, workers
    }

    /// Slots per door class.
    let capacity: Int
    /// Slots one peer may hold in a class with handshakes older than ``grace``.
    let perPeer: Int
    /// How long a handshake waits before a newer one of its peer's may push it out.
    let grace: Duration

    private struct Pending {
        var ticket: Ticket
        var peer: String
        var since: ContinuousClock.Instant
    }

    /// Pending handshakes per class, oldest first.
    private var pending: [DoorClass: [Pending]] = [:]
    /// The class of each pending ticket.
    private var classOf: [Ticket: DoorClass] = [:]

    private let clock: MonotonicClock

    /// Slots of `capacity` per class, `perPeer` of them at most per peer once they have
    /// waited `grace` on `clock`.
    init(capacity: Int, perPeer: Int, grace: Duration = .seconds(1), clock: MonotonicClock) {
        self.capacity = max(1, capacity)
        self.perPeer = max(1, min(perPeer, capacity))
        self.grace = grace
        self.clock = clock
    }

    /// Handshakes waiting now, in every class.
    var count: Int { classOf.count }

    /// Handshakes waiting now in `doorClass`.
    func count(in doorClass: DoorClass) -> Int { pending[doorClass]?.count ?? 0 }

    /// Handshakes waiting now from `peer` in `doorClass`.
    func count(from peer: String, in doorClass: DoorClass) -> Int {
        pending[doorClass]?.count { $0.peer == peer } ?? 0
    }

    /// The peer every Unix-socket connection counts as: held to the capacity alone.
    static var localPeer: String { "local" }

    /// Takes a slot for `ticket`, from `peer` (an IP address, or ``localPeer``), at a door of
    /// `doorClass`, now; returns the ticket whose connection must be closed to make room, if
    /// one must.
    mutating func take(_ ticket: Ticket, from peer: String, in doorClass: DoorClass) -> Ticket? {
        let now = clock.now
        var queue = pending[doorClass] ?? []
        var pushedOut: Ticket?
        if peer != Self.localPeer, queue.count(where: { $0.peer == peer }) >= perPeer,
            let oldest = queue.firstIndex(where: { $0.peer == peer }),
            now - queue[oldest].since >= grace
        {
            pushedOut = queue.remove(at: oldest).ticket
        } else if queue.count >= capacity {
            var held: [String: Int] = [:]
            for entry in queue { held[entry.peer, default: 0] += 1 }
            let greediest = held.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }!.key
            pushedOut = queue.remove(at: queue.firstIndex { $0.peer == greediest }!).ticket
        }
        if let pushedOut { classOf[pushedOut] = nil }
        queue.append(Pending(ticket: ticket, peer: peer, since: now))
        pending[doorClass] = queue
        classOf[ticket] = doorClass
        return pushedOut
    }

    /// Frees `ticket`'s slot (its hello came, or its connection ended); nothing when it holds none.
    mutating func release(_ ticket: Ticket) {
        guard let doorClass = classOf.removeValue(forKey: ticket) else { return }
        pending[doorClass]?.removeAll { $0.ticket == ticket }
    }
}
