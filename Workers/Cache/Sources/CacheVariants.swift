/// How the cache worker keeps several variants of one key (responses with a `Vary`, see
/// ``Monarch/SharingRules``) apart, within a bound.
///
/// The key's own entry holds the latest response stored under it. A response that varies
/// also goes to one of ``slots`` slot entries of its key, chosen by a hash of its variant (the
/// request's values of the headers it varies on), and each variant entry remembers its
/// variant in the reserved header ``header`` (a name no HTTP header can have). A lookup that
/// finds the key's entry varying on other values than the request's tries the slot the
/// request's values pick; a variant is answered only when its remembered values are the
/// request's. So a key has at most 1 + ``slots`` entries, and two variants hashing to one slot
/// take turns (a miss, never a wrong answer). Invalidating a key drops its slots too.
package enum CacheVariants {
    /// The slot entries a key has at most, besides its own.
    package static let slots = 8

    /// The reserved header in which an entry remembers its variant: it starts with `:`, which
    /// no HTTP field name holds, and is never answered.
    package static let header = ":variant"

    /// What follows a key in its slot entries' keys: a space (which no cache key has after its
    /// path) and `~v`.
    static let marker = " ~v"

    /// The key of the slot that `variant` of `key` goes to. The hash (FNV-1a over the
    /// variant's bytes) is the same in every process, as a shared store needs.
    package static func slotKey(_ key: String, variant: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in variant.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return slotKey(key, slot: Int(hash % UInt64(slots)))
    }

    /// The key of slot `slot` of `key`.
    static func slotKey(_ key: String, slot: Int) -> String { "\(key)\(marker)\(slot)" }

    /// Every slot key of `key`.
    static func slotKeys(of key: String) -> [String] { (0..<slots).map { slotKey(key, slot: $0) } }

    /// The key whose slot `key` is; `key` itself when it is no slot's.
    static func baseKey(of key: String) -> String {
        // Slots are numbered with one digit.
        guard let slot = key.last?.wholeNumberValue, slot < slots, key.dropLast().hasSuffix(marker) else { return key }
        return String(key.dropLast(marker.count + 1))
    }

    /// Whether `key` is a slot's.
    static func isSlotKey(_ key: String) -> Bool { baseKey(of: key).utf8.count != key.utf8.count }
}
