import Monarch
import MonarchWire
import Synchronization

/// The changes of one watch on their way to the tasks iterating it: at most `limit` wait;
/// past that they are counted and an iterator gets one `overflow` after the ones that waited.
/// Tasks iterating at once take turns, each change going to one of them. Any thread.
final class WatchChannel: Sendable {
    private struct State {
        var events: [CacheChange] = []
        var lost = 0
        var gap = false
        /// The tasks waiting for a change, in the order they asked, by ticket.
        var waiters: [(ticket: Int, continuation: CheckedContinuation<CacheChange?, Never>)] = []
        var nextTicket = 0
        var finished = false
        /// The id of the `watch` message that runs the watch on the current connection.
        var watchID: MessageID
        /// The connection (``ClientCore/currentGeneration``) the id belongs to.
        var generation: Int?
        let target: CacheTarget
    }

    let limit: Int
    private let state: Mutex<State>

    init(watchID: MessageID, target: CacheTarget, limit: Int) {
        self.limit = max(1, limit)
        state = Mutex(State(watchID: watchID, target: target))
    }

    /// The id the watch runs under now.
    var watchID: MessageID { state.withLock { $0.watchID } }
    /// The id the watch runs under, and the connection it runs on.
    var registration: (id: MessageID, generation: Int?) { state.withLock { ($0.watchID, $0.generation) } }
    /// What the watch follows.
    var target: CacheTarget { state.withLock { $0.target } }
    /// Whether the watch has ended.
    var isFinished: Bool { state.withLock { $0.finished } }
    /// Tasks waiting for a change now.
    var waitingTasks: Int { state.withLock { $0.waiters.count } }

    /// Hands `change` to the waiting iterator, or queues it, or counts it lost.
    func push(_ change: CacheChange) {
        let waiter = state.withLock { state -> CheckedContinuation<CacheChange?, Never>? in
            guard !state.finished else { return nil }
            if !state.waiters.isEmpty, state.events.isEmpty, state.lost == 0, !state.gap {
                return state.waiters.removeFirst().continuation
            }
            if state.events.count < limit, state.lost == 0, !state.gap { state.events.append(change) } else { state.lost += 1 }
            return nil
        }
        waiter?.resume(returning: change)
    }

    /// Notes that changes may have been missed (the watch was restored on a new connection):
    /// the iterator gets an `overflow` with no count, in its place among the changes — the
    /// ones that came before it first, the ones that come after it next.
    func markGap() {
        let waiter = state.withLock { state -> CheckedContinuation<CacheChange?, Never>? in
            guard !state.finished else { return nil }
            if !state.waiters.isEmpty, state.events.isEmpty, state.lost == 0, !state.gap {
                return state.waiters.removeFirst().continuation
            }
            if state.events.count < limit, state.lost == 0, !state.gap {
                state.events.append(CacheChange(kind: .overflow))
            } else {
                // Changes are being lost already: the overflow to come stands for the gap too.
                state.gap = true
            }
            return nil
        }
        waiter?.resume(returning: CacheChange(kind: .overflow))
    }

    /// Moves the watch to `id` on connection `generation` (restored on a new connection).
    func move(to id: MessageID, generation: Int?) {
        state.withLock { state in
            state.watchID = id
            state.generation = generation
        }
    }

    /// Ends the iteration once the queued changes are taken: every waiting task gets nil.
    func finish() {
        let waiters = state.withLock { state in
            state.finished = true
            defer { state.waiters.removeAll() }
            return state.waiters.map(\.continuation)
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// The next change; nil once finished (or the waiting task is cancelled).
    func next() async -> CacheChange? {
        let ticket = state.withLock { state in
            defer { state.nextTicket += 1 }
            return state.nextTicket
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> CacheChange?? in
                    if !state.events.isEmpty { return .some(state.events.removeFirst()) }
                    if state.lost > 0 || state.gap {
                        defer {
                            state.lost = 0
                            state.gap = false
                        }
                        return .some(CacheChange(kind: .overflow, dropped: state.gap ? nil : state.lost))
                    }
                    if state.finished || Task.isCancelled { return .some(nil) }
                    state.waiters.append((ticket, continuation))
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            // This task's wait only: others iterating the same watch go on.
            let waiter = state.withLock { state -> CheckedContinuation<CacheChange?, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.ticket == ticket }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(returning: nil)
        }
    }
}

/// The watches of one client, by the id each runs under on the current connection. Any thread.
final class WatchTable: Sendable {
    private let channels = Mutex<[MessageID: WatchChannel]>([:])

    /// Registers `channel` under `id`, the id of the `watch` message about to go out on
    /// connection `generation` (before it does, so no change that follows the answer is
    /// missed).
    func register(_ channel: WatchChannel, as id: MessageID, on generation: Int?) {
        channels.withLock { channels in
            if channels[channel.watchID] === channel { channels.removeValue(forKey: channel.watchID) }
            channel.move(to: id, generation: generation)
            channels[id] = channel
        }
    }

    /// Takes every channel out of the table (to register each again on a new connection,
    /// where ids start over).
    func takeAll() -> [WatchChannel] {
        channels.withLock { channels in
            defer { channels.removeAll() }
            return Array(channels.values)
        }
    }

    /// Forgets `channel`, unless another runs under its id now.
    func remove(_ channel: WatchChannel) {
        channels.withLock { channels in
            if channels[channel.watchID] === channel { channels.removeValue(forKey: channel.watchID) }
        }
    }

    /// Hands a `changed` message to its watch; one for no active watch is ignored (it crossed
    /// an unwatch).
    func deliver(_ message: ChangedMessage) {
        channels.withLock { $0[message.watch] }?.push(CacheChange(message))
    }

    /// Whether no watch is active.
    var isEmpty: Bool { channels.withLock { $0.isEmpty } }

    /// Ends every watch (the connection is gone for good).
    func finishAll() {
        let all = channels.withLock { channels in
            defer { channels.removeAll() }
            return Array(channels.values)
        }
        for channel in all { channel.finish() }
    }
}
