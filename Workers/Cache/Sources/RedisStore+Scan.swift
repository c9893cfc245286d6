import MonarchWire

// Prefix invalidation on Redis: `SCAN` cursor by cursor, never `KEYS` (see ``RedisStore``).
extension RedisStore {
    /// One step of a prefix invalidation: `SCAN` from `cursor`, `DEL` what it found, and on
    /// to the next cursor until Redis returns to 0; `deleted` counts what the `DEL`s dropped
    /// so far (an invalidation that dropped nothing is published as such).
    func scan(prefix: String, cursor: String, found: Set<String>, deleted: Int, operation: StoreOperation) {
        scanStep(prefix: prefix, cursor: cursor, operation: operation) { next, rawKeys in
            var found = found
            for raw in rawKeys { found.insert(String(decoding: raw.dropFirst(Self.entryPrefix.count), as: UTF8.self)) }
            let afterDelete = { (deleted: Int) in
                if let next {
                    self.scan(prefix: prefix, cursor: next, found: found, deleted: deleted, operation: operation)
                } else {
                    self.publish(.invalidated, .prefix(prefix), changedSomething: deleted > 0)
                    operation.finish(.keys(Array(found)))
                }
            }
            guard !rawKeys.isEmpty else { return afterDelete(deleted) }
            let commands = self.connections.value.commands
            let deleting = commands.send([Array("DEL".utf8)] + rawKeys) { reply in
                guard let reply else {
                    return self.unavailable(operation, "the Redis store at \(self.address) went away during the scan")
                }
                let count = if case .integer(let count) = reply { Int(count) } else { 0 }
                afterDelete(deleted + count)
            }
            if !deleting { self.unavailable(operation, commands.unavailableReason) }
        }
    }

    /// One step of a prefix soft purge: `SCAN` from `cursor`, mark stale at `nowMs` what it
    /// found (``RedisStaleScripts/keys``), and on until Redis returns to 0; `marked` holds the
    /// keys marked so far (a purge that marked nothing is published as such).
    func scanMarkingStale(prefix: String, cursor: String, nowMs: Int64, marked: Set<String>, operation: StoreOperation) {
        scanStep(prefix: prefix, cursor: cursor, operation: operation) { next, rawKeys in
            let afterMarking = { (marked: Set<String>) in
                if let next {
                    self.scanMarkingStale(prefix: prefix, cursor: next, nowMs: nowMs, marked: marked, operation: operation)
                } else {
                    self.publish(.invalidated, .prefix(prefix), changedSomething: !marked.isEmpty)
                    operation.finish(.keys(Array(marked)))
                }
            }
            guard !rawKeys.isEmpty else { return afterMarking(marked) }
            let commands = self.connections.value.commands
            let marking = commands.send(self.markStaleArguments(rawKeys, nowMs: nowMs)) { reply in
                switch reply {
                case nil: self.unavailable(operation, "the Redis store at \(self.address) went away during the scan")
                case .error(let message)?: operation.finish(.refused("Redis at \(self.address): \(message)"))
                case let reply?: afterMarking(marked.union(Self.texts(of: reply)))
                }
            }
            if !marking { self.unavailable(operation, commands.unavailableReason) }
        }
    }

    /// Sends one `SCAN` of the entries under `prefix` from `cursor` (`MATCH` on the prefix with
    /// the glob characters escaped, `COUNT 1000`) and hands `then` the next cursor (nil once
    /// Redis is back at 0) and the Redis keys found; a failure ends `operation` instead.
    private func scanStep(
        prefix: String, cursor: String, operation: StoreOperation, then: @escaping (String?, [[UInt8]]) -> Void
    ) {
        let pattern = Self.entryPrefix + Self.globEscaped(prefix) + Array("*".utf8)
        let arguments = [
            Array("SCAN".utf8), Array(cursor.utf8), Array("MATCH".utf8), pattern, Array("COUNT".utf8), Array("1000".utf8),
        ]
        let commands = connections.value.commands
        let sent = commands.send(arguments) { reply in
            guard let reply else {
                return self.unavailable(operation, "the Redis store at \(self.address) went away during the scan")
            }
            guard case .array(let parts) = reply, parts.count == 2, let next = parts[0].text, case .array(let keys) = parts[1]
            else {
                if case .error(let message) = reply { return operation.finish(.refused("Redis at \(self.address): \(message)")) }
                return operation.finish(.refused("Redis at \(self.address) answered SCAN with an unexpected reply"))
            }
            let rawKeys = keys.compactMap { reply -> [UInt8]? in
                if case .string(let bytes) = reply { return bytes }
                return nil
            }
            then(next == "0" ? nil : next, rawKeys)
        }
        if !sent { unavailable(operation, commands.unavailableReason) }
    }

    /// `text`'s bytes with Redis's glob characters (`*`, `?`, `[`, `]`, `\`) escaped.
    static func globEscaped(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            if byte == UInt8(ascii: "*") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]")
                || byte == UInt8(ascii: "\\")
            {
                bytes.append(UInt8(ascii: "\\"))
            }
            bytes.append(byte)
        }
        return bytes
    }
}
