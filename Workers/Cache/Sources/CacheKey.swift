import Monarch

/// A cache key compared byte for byte, as SQLite compares keys (see ``Monarch/ByteExactKey``).
typealias CacheKey = ByteExactKey
