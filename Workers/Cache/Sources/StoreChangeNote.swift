import MonarchWire

/// One change to a shared store as its workers tell each other (Redis: a message on
/// `monarch:changes:DB`): which worker made it and its sequence there (together the change's
/// id), the coordinator it was made through (`origin`), what happened, to what, and whether
/// an invalidation dropped anything.
package struct StoreChangeNote: Sendable, Equatable {
    /// The publishing worker's random identity.
    package var sender: String
    /// The change's number among the sender's.
    package var sequence: UInt64
    /// The identity of the coordinator the change was made through (its `welcome`'s
    /// `origin`); empty when the worker was told none.
    package var origin: String
    /// Stored or invalidated.
    package var event: SharedChangeMessage.Event
    /// The key stored, or the key, prefix or tag invalidated.
    package var target: InvalidateMessage.Target
    /// The stored entry's tags.
    package var tags: [String]
    /// Whether the change changed anything: an invalidation that dropped no entry did not
    /// (every cache worker of a coordinator runs its invalidations; one of them drops).
    package var changedSomething: Bool

    /// The change's id, the same for everyone who hears it.
    package var id: String { "\(sender).\(sequence)" }

    /// Creates a note.
    package init(
        sender: String, sequence: UInt64, origin: String, event: SharedChangeMessage.Event,
        target: InvalidateMessage.Target, tags: [String] = [], changedSomething: Bool = true
    ) {
        self.sender = sender
        self.sequence = sequence
        self.origin = origin
        self.event = event
        self.target = target
        self.tags = tags
        self.changedSomething = changedSomething
    }

    /// The note as published: lines `sender`, `sequence`, `origin`, `s`|`i` (event), `1`|`0`
    /// (changed something), `k`|`p`|`t` (target), the number of tags, the tags, then the
    /// target's text (last, so it may hold line breaks). Nil for a path target.
    package var payload: String? {
        let kind: String
        let text: String
        switch target {
        case .key(let key): (kind, text) = ("k", key)
        case .prefix(let prefix): (kind, text) = ("p", prefix)
        case .tag(let tag): (kind, text) = ("t", tag)
        case .path, .pathPrefix: return nil
        }
        // Lines are split on the byte 0x0A: a tag holding one could not be read back (nor more
        // tags than a reader takes).
        let tags = tags.filter { !$0.utf8.contains(Self.newline) }.prefix(Self.tagLimit)
        let head = [
            sender, String(sequence), origin, event == .stored ? "s" : "i", changedSomething ? "1" : "0", kind,
            String(tags.count),
        ] + tags
        return (head + [text]).joined(separator: "\n")
    }

    /// Reads a published note; nil for anything else. Lines are split on the byte 0x0A, never
    /// on characters (`"\r\n"` is one character).
    package init?(payload: String) {
        let lines = payload.utf8.split(separator: Self.newline, maxSplits: 6, omittingEmptySubsequences: false)
        let head = lines.map { Substring($0) }
        guard head.count == 7, let sequence = UInt64(head[1]), !head[0].isEmpty else { return nil }
        let event: SharedChangeMessage.Event
        switch head[3] {
        case "s": event = .stored
        case "i": event = .invalidated
        default: return nil
        }
        let countLine = lines[6].split(separator: Self.newline, maxSplits: 1, omittingEmptySubsequences: false)
        guard countLine.count == 2, let tagCount = Int(Substring(countLine[0])), (0...Self.tagLimit).contains(tagCount) else {
            return nil
        }
        let tagsAndText = countLine[1].split(separator: Self.newline, maxSplits: tagCount, omittingEmptySubsequences: false)
            .map { Substring($0) }
        guard tagsAndText.count == tagCount + 1 else { return nil }
        let text = String(tagsAndText[tagCount])
        let target: InvalidateMessage.Target
        switch head[5] {
        case "k": target = .key(text)
        case "p": target = .prefix(text)
        case "t": target = .tag(text)
        default: return nil
        }
        guard event == .invalidated || head[5] == "k" else { return nil }
        self.init(
            sender: String(head[0]), sequence: sequence, origin: String(head[2]), event: event, target: target,
            tags: tagsAndText.prefix(tagCount).map(String.init), changedSomething: head[4] == "1")
    }

    /// The line separator, a byte.
    private static let newline = UInt8(ascii: "\n")
    /// The most tags a note carries.
    private static let tagLimit = 1024
}
