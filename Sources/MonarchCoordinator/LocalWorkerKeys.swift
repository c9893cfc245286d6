import Synchronization

/// The secret each worker the coordinator starts is given, by worker name: a hello naming a
/// worker of the coordinator's own must present its key as its token, so that no other
/// process (a client holding the shared token, another local user) can take a local worker's
/// name, its requests and its place. A new key is issued at every start of the worker.
/// Safe from any thread.
final class LocalWorkerKeys: Sendable {
    /// The environment variable a started worker finds its key in.
    static let environmentName = "MONARCH_WORKER_KEY"

    private let keys = Mutex<[String: String]>([:])

    /// A new key for the worker named `name`, replacing any earlier one.
    func issue(for name: String) -> String {
        var generator = SystemRandomNumberGenerator()
        let key = (0..<4).map { _ in
            let word = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - word.count) + word
        }.joined()
        keys.withLock { $0[name] = key }
        return key
    }

    /// The key of the started worker named `name`; nil for a name the coordinator starts no
    /// worker under.
    func key(for name: String) -> String? {
        keys.withLock { $0[name] }
    }

    /// Forgets the key of `name`: the coordinator starts no worker under it any more.
    func forget(_ name: String) {
        keys.withLock { _ = $0.removeValue(forKey: name) }
    }
}
