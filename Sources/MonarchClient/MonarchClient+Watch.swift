import Monarch
import MonarchWire

/// A watch on cache entries: an `AsyncSequence` of the changes the coordinator pushes
/// (``CacheChange``), from ``MonarchClient/watch(_:bufferSize:)`` until ``cancel()`` or the
/// client's close.
///
/// ```swift
/// let watch = try await client.watch(.path("users/1"))
/// for await change in watch {
///     print(change.kind, change.key ?? "")   // stored, refreshed, invalidated, overflow
/// }
/// ```
///
/// Changes wait for the iterating task in a buffer of `bufferSize`; past that they are lost
/// and the iterator gets one `overflow` change, as it does when the coordinator's own queue
/// for this client overflowed: refetch what you show.
public struct CacheWatch: AsyncSequence, Sendable {
    /// Each element is one change.
    public typealias Element = CacheChange
    /// Iterating never throws: the sequence ends when the watch does.
    public typealias Failure = Never

    private let channel: WatchChannel
    private let client: MonarchClient
    /// What the coordinator resolved the target to (keys, key prefixes or a tag).
    public let targets: [String]

    init(channel: WatchChannel, client: MonarchClient, targets: [String]) {
        self.channel = channel
        self.client = client
        self.targets = targets
    }

    /// What the watch follows.
    public var target: CacheTarget { channel.target }

    /// Stops the watch (an `unwatch` to the coordinator) and ends the iteration once the
    /// changes already here are taken. Calling it again does nothing.
    public func cancel() async {
        guard !channel.isFinished else { return }
        let (id, generation) = channel.registration
        client.watchTable.remove(channel)
        channel.finish()
        // The watch runs under `id` on the connection it was registered on only: on another
        // one `id` names another watch or none, and the coordinator ended this one with its
        // connection. So the unwatch goes out on that connection or not at all.
        let core = client.core
        guard let generation, core.currentGeneration == generation else { return }
        _ = try? await core.exchange(idempotent: false, deadline: core.options.deadline, what: "unwatch") { next in
            core.currentGeneration == generation ? .unwatch(UnwatchMessage(id: next, watch: id)) : .ping(PingMessage(id: next))
        }
    }

    /// Iterates the changes.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let channel: WatchChannel

        /// The next change; nil once the watch ended (or the task was cancelled).
        public mutating func next() async -> CacheChange? { await channel.next() }

        /// The next change; nil once the watch ended (or the task was cancelled).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(Never) -> CacheChange? {
            await channel.next()
        }
    }

    /// An iterator over the changes; every iterator of a watch takes from the same changes.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(channel: channel) }
}

extension MonarchClient {
    /// Watches the cache entries `target` names — a key (``CacheKey/rawValue``), a key prefix,
    /// a tag, a resource path (`.path("users/1")`, resolved through the coordinator's routes
    /// like a request's path) or a path prefix — and returns the changes the coordinator
    /// pushes for them: entries stored or refreshed by any client's requests, invalidations
    /// by any client (another process included). Watches outlive a reconnection: the client
    /// sends them again on its new connection, and each iterator gets an `overflow` (changes
    /// may have been missed meanwhile).
    ///
    /// - Parameter bufferSize: changes kept for the iterating task at most; past that one
    ///   `overflow` stands for the lost ones.
    /// - Throws: ``MonarchError/chainFailure(_:)``: the target does not resolve (`noRoute`,
    ///   `invalidPath`, `unknownDomain`, `requestTooLarge`), the connection holds
    ///   `limits.watchesPerClient` watches already (`overloaded`); or what any exchange throws.
    public func watch(_ target: CacheTarget, bufferSize: Int = 256) async throws(MonarchError) -> CacheWatch {
        let channel = WatchChannel(watchID: 0, target: target, limit: bufferSize)
        let table = watchTable
        do throws(MonarchError) {
            // Registered under each id the message goes out with, before it goes out, so no
            // change that follows the answer is missed.
            let core = core
            let result = try await admin("watch") { id in
                table.register(channel, as: id, on: core.currentGeneration)
                return .watch(WatchMessage(id: id, target: target))
            }
            return CacheWatch(channel: channel, client: self, targets: Self.targets(of: result))
        } catch {
            table.remove(channel)
            channel.finish()
            throw error
        }
    }

    /// Sends every active watch again, under fresh ids, and tells each watch's iterator that
    /// changes may have been missed (an `overflow` with no count). The client does this by
    /// itself after each reconnection; calling it otherwise re-registers the watches on the
    /// current connection.
    ///
    /// - Returns: how many watches were restored.
    public func restoreWatches() async -> Int {
        await Self.restore(watchTable, over: core)
    }

    /// Installs what watches need on the connection machinery: pushed changes reach their
    /// watch, and every reconnection restores the watches. The closures hold the table and
    /// (weakly) the core, never the client.
    func startWatching() {
        let table = watchTable
        core.onPush.withLock { handler in
            handler = { message in
                if case .changed(let change) = message { table.deliver(change) }
            }
        }
        core.staysConnected.withLock { handler in
            handler = { !table.isEmpty }
        }
        core.onReconnected.withLock { handler in
            handler = { [weak core] _ in
                guard let core else { return }
                _ = await Self.restore(table, over: core)
            }
        }
    }

    /// Sends each of `table`'s watches again over `core`: the ones the coordinator takes get
    /// an `overflow` gap, the others end.
    private static func restore(_ table: WatchTable, over core: ClientCore) async -> Int {
        var restored = 0
        for channel in table.takeAll() where !channel.isFinished {
            let target = channel.target
            let answer = try? await core.exchange(idempotent: true, deadline: core.options.deadline, what: "watch") { id in
                table.register(channel, as: id, on: core.currentGeneration)
                return .watch(WatchMessage(id: id, target: target))
            }
            if case .result? = answer {
                restored += 1
                channel.markGap()
            } else {
                table.remove(channel)
                channel.finish()
            }
        }
        return restored
    }

    private static func targets(of result: ResultMessage) -> [String] {
        guard case .array(let values)? = result.data?["targets"] else { return [] }
        return values.compactMap { if case .string(let text) = $0 { text } else { nil } }
    }
}
