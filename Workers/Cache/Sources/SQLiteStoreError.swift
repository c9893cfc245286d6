import CSQLite

/// Why the SQLite store could not do what was asked.
public struct SQLiteStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure it is.
    public enum Kind: Sendable, Equatable {
        /// SQLite returned this (extended) result code.
        case sqlite(code: Int32)
        /// The file is this store's (it has the store's application id), but its `entries`
        /// table is not the one this version reads: it is moved aside.
        case wrongSchema
        /// The file is an SQLite database of something else (another application id, or
        /// tables without this store's id): it is neither used nor changed nor moved aside.
        case foreignDatabase
        /// An unusable file could not be moved out of the way.
        case cannotMoveAside
        /// The store was closed, or its loop shut down, before the operation ran.
        case closed
        /// The caller's task was cancelled while the operation waited for its turn.
        case cancelled
        /// As many operations as the store queues (``SQLiteStore/maxWaiting``) already waited
        /// for the disk: refused at once.
        case busy
    }

    /// What kind of failure it is.
    public var kind: Kind
    /// What went wrong, naming the file and the operation.
    public var message: String

    /// Creates an error.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// Whether the file itself is the problem, so that it is moved aside and a fresh one
    /// started: it is not a database, it is corrupt, or it is this store's in a shape it
    /// cannot read. Another application's database is not: it is left alone.
    public var isUnusableFile: Bool {
        switch kind {
        case .sqlite(let code): Self.isCorruption(code)
        case .wrongSchema: true
        case .foreignDatabase, .cannotMoveAside, .closed, .cancelled, .busy: false
        }
    }

    /// Whether an SQLite result code reports a damaged file or one that is no database.
    static func isCorruption(_ code: Int32) -> Bool {
        let primary = code & 0xFF
        return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB
    }

    public var description: String { message }
}
