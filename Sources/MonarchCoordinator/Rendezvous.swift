/// Rendezvous (highest random weight) hashing: each key goes to the worker whose name scores
/// highest with it. Every coordinator computes the same owner from the same names, and when a
/// worker joins or leaves only the keys it wins or held move (about 1/N of them).
enum Rendezvous {
    /// The score of `worker` for `key`: a 64-bit hash of both, well mixed.
    static func score(worker: String, key: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a over "worker \0 key"
        for byte in worker.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        hash = hash &* 0x0000_0100_0000_01b3  // the separator byte 0
        for byte in key.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        // MurmurHash3's finalizer, so that similar names and keys give unrelated scores.
        hash ^= hash >> 33
        hash &*= 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash &*= 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        return hash
    }

    /// The index in `workers` (names) of the owner of `key`; nil when `workers` is empty. Ties
    /// (equal names) go to the first.
    static func owner(of key: String, among workers: [String]) -> Int? {
        owner(of: key, among: workers.indices) { workers[$0] }
    }

    /// The candidate that owns `key`, each known by its `name`; nil when there is none. Ties
    /// (equal names) go to the first.
    static func owner<Candidates: Sequence>(
        of key: String, among candidates: Candidates, name: (Candidates.Element) -> String
    ) -> Candidates.Element? {
        var best: (candidate: Candidates.Element, score: UInt64)?
        for candidate in candidates {
            let score = score(worker: name(candidate), key: key)
            if best == nil || score > best!.score { best = (candidate, score) }
        }
        return best?.candidate
    }
}
