import CSQLite

/// Why the SQLite store could not do what was asked.
public struct SQLiteStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure it is.
    public enum Kind: Sendable, Equatable {
        /// SQLite returned this (extended) result code.
        case sqlite(code: Int32)
        /// The file is an SQLite database, but not one this store wrote (other tables, other
        /// columns, another application's id).
        case wrongSchema
        /// An unusable file could not be moved out of the way.
        case cannotMoveAside
        /// The store was closed, or its loop shut down, before the operation ran.
        case closed
        /// The caller's task was cancelled while the operation waited for its turn.
        case cancelled
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
    /// started: it is not a database, it is corrupt, or it holds another schema.
    public var isUnusableFile: Bool {
        switch kind {
        case .sqlite(let code): Self.isCorruption(code)
        case .wrongSchema: true
        case .cannotMoveAside, .closed, .cancelled: false
        }
    }

    /// Whether an SQLite result code reports a damaged file or one that is no database.
    static func isCorruption(_ code: Int32) -> Bool {
        let primary = code & 0xFF
        return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB
    }

    public var description: String { message }
}
