@testable import MonarchCoordinator
import MonarchWire
import Testing

@Suite struct RoleGateTests {
    let unix = Door(takes: .client, isUnixSocket: true, isLocal: true)
    let loopback = Door(takes: .client, isUnixSocket: false, isLocal: true)
    let remote = Door(takes: .client, isUnixSocket: false, isLocal: false)

    @Test("Each secret earns its own role; the clients' token never earns admin over TCP")
    func everyRoleItsSecret() {
        let gate = RoleGate(token: "client-secret", adminToken: "admin-secret", workerToken: "worker-secret")
        for door in [unix, loopback, remote] {
            #expect(gate.clientRole(presenting: "admin-secret", at: door) == .admin)
            #expect(gate.clientRole(presenting: "client-secret", at: door) == .client)
            #expect(gate.clientRole(presenting: "worker-secret", at: door) == nil)
            #expect(gate.clientRole(presenting: nil, at: door) == nil)
        }
        let workers = Door(takes: .worker, isUnixSocket: false, isLocal: true)
        #expect(gate.admitsWorker(presenting: "worker-secret", at: workers))
        #expect(!gate.admitsWorker(presenting: "client-secret", at: workers))
        #expect(!gate.admitsWorker(presenting: "admin-secret", at: workers))
        #expect(!gate.admitsWorker(presenting: nil, at: workers))
    }

    @Test("Without an admin secret, admins are those who reach a Unix socket; TCP clients are clients")
    func noAdminSecret() {
        let open = RoleGate(token: nil, adminToken: nil, workerToken: nil)
        #expect(open.clientRole(presenting: nil, at: unix) == .admin)
        #expect(open.clientRole(presenting: nil, at: loopback) == .client)
        #expect(open.clientRole(presenting: "anything", at: loopback) == .client)
        #expect(open.admitsWorker(presenting: nil, at: Door(takes: .worker, isUnixSocket: true, isLocal: true)))
        let tokenOnly = RoleGate(token: "client-secret", adminToken: nil, workerToken: nil)
        #expect(tokenOnly.clientRole(presenting: "client-secret", at: unix) == .admin)
        #expect(tokenOnly.clientRole(presenting: "client-secret", at: loopback) == .client)
        #expect(tokenOnly.clientRole(presenting: nil, at: unix) == nil)
        // With any secret configured, an unknown worker needs the workers' secret.
        #expect(!tokenOnly.admitsWorker(presenting: nil, at: Door(takes: .worker, isUnixSocket: true, isLocal: true)))
        #expect(!tokenOnly.admitsWorker(presenting: "client-secret", at: Door(takes: .worker, isUnixSocket: true, isLocal: true)))
        let adminOnly = RoleGate(token: nil, adminToken: "admin-secret", workerToken: nil)
        #expect(adminOnly.clientRole(presenting: nil, at: unix) == .client)
        #expect(adminOnly.clientRole(presenting: "admin-secret", at: loopback) == .admin)
    }

    @Test("Secrets compare whole")
    func matching() {
        #expect(RoleGate.matches("secret", "secret"))
        #expect(!RoleGate.matches("secreT", "secret"))
        #expect(!RoleGate.matches("secret1", "secret"))
        #expect(!RoleGate.matches(nil, "secret"))
        #expect(!RoleGate.matches("secret", nil))
    }
}

@Suite struct HandshakeSlotsTests {
    @Test("A peer past its share pushes out its own oldest handshake once it has waited the grace, never another peer's")
    func perPeerShare() {
        let clock = TestClock()
        var slots = HandshakeSlots<Int>(capacity: 8, perPeer: 3, grace: .seconds(1), clock: clock.clock)
        for ticket in 1...3 { let result = slots.take(ticket, from: "10.0.0.9", in: .tcpClients); #expect(result == nil) }
        do { let result = slots.take(4, from: "10.0.0.1", in: .tcpClients); #expect(result == nil) }
        // A client opening many connections at once has them all.
        do { let result = slots.take(5, from: "10.0.0.9", in: .tcpClients); #expect(result == nil) }
        #expect(slots.count(from: "10.0.0.9", in: .tcpClients) == 4)
        // Just short of the grace, nothing of its own is pushed out yet.
        clock.advance(by: .milliseconds(999))
        do { let result = slots.take(6, from: "10.0.0.9", in: .tcpClients); #expect(result == nil) }
        #expect(slots.count(from: "10.0.0.9", in: .tcpClients) == 5)
        // Past the grace, its oldest makes room.
        clock.advance(by: .milliseconds(1))
        do { let result = slots.take(7, from: "10.0.0.9", in: .tcpClients); #expect(result == 1) }
        #expect(slots.count(from: "10.0.0.9", in: .tcpClients) == 5)
        #expect(slots.count(from: "10.0.0.1", in: .tcpClients) == 1)
    }

    @Test("A full door pushes out the oldest handshake of the peer holding the most; other doors are untouched")
    func fullDoor() {
        var slots = HandshakeSlots<Int>(capacity: 4, perPeer: 4, clock: TestClock().clock)
        do { let result = slots.take(1, from: "a", in: .tcpClients); #expect(result == nil) }
        do { let result = slots.take(2, from: "b", in: .tcpClients); #expect(result == nil) }
        do { let result = slots.take(3, from: "b", in: .tcpClients); #expect(result == nil) }
        do { let result = slots.take(4, from: "a", in: .tcpClients); #expect(result == nil) }
        do { let result = slots.take(5, from: "b", in: .tcpClients); #expect(result == 1, "a and b hold two each: the tie goes to one, its oldest") }
        do { let result = slots.take(6, from: "c", in: .tcpClients); #expect(result == 2, "b holds three now") }
        // Unix-socket connections are held to the capacity alone, not to a peer's share.
        do {
            var local = HandshakeSlots<Int>(capacity: 4, perPeer: 1, grace: .zero, clock: TestClock().clock)
            for ticket in 1...4 { let result = local.take(ticket, from: HandshakeSlots<Int>.localPeer, in: .workers); #expect(result == nil) }
            let result = local.take(5, from: HandshakeSlots<Int>.localPeer, in: .workers)
            #expect(result == 1)
        }
        // Workers and Unix-socket clients have slots of their own.
        for ticket in 10..<14 { let result = slots.take(ticket, from: HandshakeSlots<Int>.localPeer, in: .workers); #expect(result == nil) }
        for ticket in 20..<24 { let result = slots.take(ticket, from: HandshakeSlots<Int>.localPeer, in: .unixClients); #expect(result == nil) }
        #expect(slots.count(in: .tcpClients) == 4)
        slots.release(6)
        slots.release(6)
        #expect(slots.count(in: .tcpClients) == 3)
        #expect(slots.count == 11)
    }
}

@Suite struct TokenBucketTests {
    @Test("A burst is allowed, then the rate; a quiet spell refills up to the burst only")
    func rate() {
        let clock = TestClock()
        var bucket = TokenBucket(ratePerSecond: 10, burst: 10, clock: clock.clock)
        for _ in 0..<10 { let taken = bucket.take(); #expect(taken) }
        do { let taken = bucket.take(); #expect(!taken) }
        clock.advance(by: .milliseconds(50))
        do { let taken = bucket.take(); #expect(!taken) }
        clock.advance(by: .milliseconds(60))
        do { let taken = bucket.take(); #expect(taken) }
        do { let taken = bucket.take(); #expect(!taken, "one token refilled in 110 ms, and it is taken") }
        clock.advance(by: .seconds(60))
        for _ in 0..<10 { let taken = bucket.take(); #expect(taken) }
        do { let taken = bucket.take(); #expect(!taken, "a minute's quiet refills the burst, no more") }
    }
}
