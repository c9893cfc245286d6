import ArgumentParser
import MonarchClient
import MonarchWire

/// The cache entries a command names (`monarch invalidate`, `monarch watch`): exactly one of a
/// PATH (resolved through the coordinator's routes), a path prefix, a tag, a raw key or a raw
/// key prefix, and the domain of a PATH or prefix when not the route's.
struct CacheTargetChoice {
    var path: String?
    var prefix: String?
    var tag: String?
    var key: String?
    var keyPrefix: String?
    var domain: String?

    /// Refuses a choice the coordinator could not take, saying why: none or several named, a
    /// URL or a raw key given as a PATH, a --domain without a PATH or prefix, an empty prefix
    /// or tag. `command` names the command in the advice (`invalidate`).
    func validate(for command: String) throws {
        if let problem = path.flatMap(ResourceArgument.problem(with:)) { throw ValidationError(problem) }
        let given = [path, prefix, tag, key, keyPrefix].compactMap { $0 }
        guard given.count == 1 else {
            throw ValidationError("give one of PATH, --prefix PATH, --tag TAG, --key KEY or --key-prefix PREFIX\(given.isEmpty ? "" : ", not several")")
        }
        if let path, Self.looksLikeKey(path) {
            throw ValidationError(
                "\"\(path)\" looks like a raw cache key, not a path: use --key \"\(path)\", or name the path as monarch get does (monarch \(command) users/1)")
        }
        if domain != nil, path == nil, prefix == nil { throw ValidationError("--domain goes with PATH or --prefix") }
        for (name, value) in [("--prefix", prefix), ("--key-prefix", keyPrefix), ("--tag", tag)] where value?.isEmpty == true {
            throw ValidationError("\(name) must not be empty")
        }
    }

    /// The entries named, as the client library takes them.
    var target: CacheTarget {
        if let path { return .path(path, domain: domain) }
        if let prefix { return .pathPrefix(prefix, domain: domain) }
        if let tag { return .tag(tag) }
        if let key { return .key(key) }
        return .prefix(keyPrefix ?? "")
    }

    /// Whether `text` reads like `METHOD DOMAIN PATH` rather than a path.
    static func looksLikeKey(_ text: String) -> Bool {
        let words = text.split(separator: " ", maxSplits: 2)
        return words.count == 3 && words[0].allSatisfy { $0.isASCII && $0.isUppercase }
    }
}
