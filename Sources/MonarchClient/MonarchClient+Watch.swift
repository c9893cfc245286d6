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
        let id = channel.watchID
        client.watchTable.remove(id)
        channel.finish()
        _ = try? await client.exchange { .unwatch(UnwatchMessage(id: $0, watch: id)) }
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
    /// by any client (another process included).
    ///
    /// - Parameter bufferSize: changes kept for the iterating task at most; past that one
    ///   `overflow` stands for the lost ones.
    /// - Throws: ``MonarchClientError/adminFailed(_:)``: the target does not resolve
    ///   (`noRoute`, `invalidPath`, `unknownDomain`, `requestTooLarge`), the connection holds
    ///   `limits.watchesPerClient` watches already (`overloaded`).
    public func watch(_ target: CacheTarget, bufferSize: Int = 256) async throws(MonarchClientError) -> CacheWatch {
        var channel: WatchChannel?
        let answer = try await exchange { id in
            let made = WatchChannel(watchID: id, target: target, limit: bufferSize)
            channel = made
            watchTable.register(made)
            return .watch(WatchMessage(id: id, target: target))
        }
        guard let channel else { throw .connectionLost("the watch was not sent") }
        switch answer {
        case .result(let result):
            return CacheWatch(channel: channel, client: self, targets: Self.targets(of: result))
        case .failure(let failure):
            watchTable.remove(channel.watchID)
            channel.finish()
            throw .adminFailed("\(failure.error.code): \(failure.error.message)")
        case let other:
            watchTable.remove(channel.watchID)
            channel.finish()
            throw .connectionLost("unexpected \(other.type) in answer to watch")
        }
    }

    /// Sends every active watch again, under fresh ids, and tells each watch's iterator that
    /// changes may have been missed (an `overflow` with no count).
    ///
    /// For a client that reconnects: call it once the new connection said hello, before
    /// anything else, so watches outlive a coordinator restart. A watch the coordinator
    /// refuses now (its route is gone) ends.
    ///
    /// - Returns: how many watches were restored.
    public func restoreWatches() async -> Int {
        var restored = 0
        for channel in watchTable.active where !channel.isFinished {
            let target = channel.target
            let answer = try? await exchange { id in
                watchTable.move(channel, to: id)
                return .watch(WatchMessage(id: id, target: target))
            }
            if case .result? = answer {
                restored += 1
                channel.markGap()
            } else {
                watchTable.remove(channel.watchID)
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
