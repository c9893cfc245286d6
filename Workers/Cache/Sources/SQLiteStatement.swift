import CSQLite
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One prepared statement of a ``SQLiteDatabase``: bind, step, read columns, reset.
///
/// Not thread-safe: used by one thread at a time, as its connection is.
final class SQLiteStatement {
    let handle: OpaquePointer
    let sql: String
    private unowned let database: SQLiteDatabase

    /// SQLite's "copy the bytes now" destructor (`SQLITE_TRANSIENT`, a macro Swift cannot import).
    private static let transient = unsafeBitCast(Int(-1), to: sqlite3_destructor_type.self)

    init(_ sql: String, in database: SQLiteDatabase) throws(SQLiteStoreError) {
        var handle: OpaquePointer?
        let result = sqlite3_prepare_v3(database.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard result == SQLITE_OK, let handle else {
            throw database.error(result, "prepare \(sql)")
        }
        self.handle = handle
        self.sql = sql
        self.database = database
    }

    func finalize() {
        sqlite3_finalize(handle)
    }

    /// Binds `text` to parameter `index` (1-based), byte for byte (a NUL byte does not end it).
    func bind(_ index: Int32, text: String) {
        var text = text
        text.withUTF8 { bindText(index, $0) }
    }

    /// Binds raw `bytes` as text (a range bound that need not be valid UTF-8).
    func bind(_ index: Int32, textBytes bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { bindText(index, $0) }
    }

    private func bindText(_ index: Int32, _ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            // A null pointer would bind NULL, not the empty text.
            sqlite3_bind_text(handle, index, "", 0, Self.transient)
            return
        }
        base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
            _ = sqlite3_bind_text(handle, index, $0, Int32(bytes.count), Self.transient)
        }
    }

    func bind(_ index: Int32, int64 value: Int64?) {
        if let value {
            sqlite3_bind_int64(handle, index, value)
        } else {
            sqlite3_bind_null(handle, index)
        }
    }

    /// Binds `data` as a blob; an empty one is an empty blob, not NULL.
    func bind(_ index: Int32, blob data: Data) {
        if data.isEmpty {
            sqlite3_bind_zeroblob(handle, index, 0)
            return
        }
        data.withUnsafeBytes { bytes in
            _ = sqlite3_bind_blob64(handle, index, bytes.baseAddress, sqlite3_uint64(bytes.count), Self.transient)
        }
    }

    /// Runs the statement one step: true when a row is ready to read, false when done.
    func step() throws(SQLiteStoreError) -> Bool {
        let result = sqlite3_step(handle)
        switch result {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw database.error(result, "run \(sql)")
        }
    }

    /// Makes the statement ready to run again, with no parameters bound.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    func blob(_ column: Int32) -> Data {
        guard let pointer = sqlite3_column_blob(handle, column) else { return Data() }
        return Data(bytes: pointer, count: Int(sqlite3_column_bytes(handle, column)))
    }
}
