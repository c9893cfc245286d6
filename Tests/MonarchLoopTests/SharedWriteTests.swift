import Foundation
import MonarchLoop
import Synchronization
import Testing

/// A body written with ``StreamConnection/write(_:then:)`` arrives whole and in order with
/// what is written around it, however little the kernel takes at a time, and is let go of once
/// written.
@Suite struct SharedWriteTests {
    /// A reference that does not keep its object alive.
    struct Weak: Sendable {
        weak var value: SharedBytes?
        init(_ value: SharedBytes) { self.value = value }
    }

    /// `count` bytes of a pattern that shows any byte out of place.
    private static func pattern(_ count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }

    @Test func sharedBodiesArriveInOrderWithWhatSurroundsThem() async throws {
        try await withLoop { loop in
            let first = Self.pattern(3 << 20, seed: 1)
            let second = Self.pattern(100_000, seed: 2)
            let bodies = Mutex<[Weak]>([])
            let listener = try await loop.submit {
                try Listener(address: .unix(path: temporarySocketPath()), on: loop) { stream in
                    let one = first.withUnsafeBytes { SharedBytes(copying: $0) }
                    let two = second.withUnsafeBytes { SharedBytes(copying: $0) }
                    bodies.withLock { $0 = [Weak(one), Weak(two)] }
                    // Far more than the socket takes at once: the first body waits in a queued
                    // write, and everything after it queues behind it.
                    stream.write(Array("before;".utf8))
                    stream.write(Array("head1;".utf8), then: one)
                    stream.write(Array(";between;".utf8))
                    stream.write(Array("head2;".utf8), then: two)
                    stream.write(Array(";after".utf8))
                    stream.closeAfterWrites()
                }
            }
            guard case .unix(let path) = listener.boundAddress else { throw CancellationError() }
            let received = try await RawSocketClient.exchange(path: path, sending: [])
            let expected = Array("before;head1;".utf8) + first + Array(";between;head2;".utf8) + second + Array(";after".utf8)
            #expect(received.count == expected.count)
            #expect(received == expected)
            // Written, the bodies are held by nothing.
            try await eventually("the writes to let go of the bodies") {
                bodies.withLock { $0.count == 2 && $0.allSatisfy { $0.value == nil } }
            }
            await listener.closeAndWait()
        }
    }

    /// What a pass writes counts as queued until the pass ends (a writer measures its answers
    /// by it), bodies included, and more bodies than one call to the kernel takes still arrive
    /// whole and in order.
    @Test func bodiesCountAsQueuedUntilThePassEndsAndManyArriveInOrder() async throws {
        try await withLoop { loop in
            let bodies = (0..<150).map { Self.pattern(20_000 + $0, seed: UInt8(truncatingIfNeeded: $0)) }
            let queuedAfterFirst = Mutex<Int>(-1)
            let listener = try await loop.submit {
                try Listener(address: .unix(path: temporarySocketPath()), on: loop) { stream in
                    for (index, body) in bodies.enumerated() {
                        stream.write(Array("<\(index)>".utf8), then: body.withUnsafeBytes { SharedBytes(copying: $0) })
                        if index == 0 { queuedAfterFirst.withLock { $0 = stream.queuedWriteBytes } }
                    }
                    stream.closeAfterWrites()
                }
            }
            guard case .unix(let path) = listener.boundAddress else { throw CancellationError() }
            let received = try await RawSocketClient.exchange(path: path, sending: [])
            let expected = bodies.enumerated().flatMap { Array("<\($0.offset)>".utf8) + $0.element }
            #expect(received.count == expected.count)
            #expect(received == expected)
            #expect(queuedAfterFirst.withLock { $0 } == 3 + 20_000)
            await listener.closeAndWait()
        }
    }
}
