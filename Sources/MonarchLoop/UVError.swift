import CLibUV

/// A failed libuv call: which operation, and libuv's error code and text.
public struct UVError: Error, Equatable, Sendable, CustomStringConvertible {
    /// libuv's (negative) error code, such as `UV_ECONNREFUSED`.
    public let code: Int32
    /// What was being done, such as `connect to unix:/tmp/x.sock`.
    public let operation: String

    /// Creates an error for `code` raised by `operation`.
    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    /// libuv's short name of the error, such as `ECONNREFUSED`.
    public var name: String { String(cString: uv_err_name(code)) }

    /// Whether the error is the end of the stream rather than a fault.
    public var isEndOfFile: Bool { code == Int32(UV_EOF.rawValue) }

    public var description: String {
        "\(operation): \(String(cString: uv_strerror(code))) (\(name))"
    }

    /// Throws a ``UVError`` when `result` is a libuv error code (negative).
    @discardableResult
    static func check(_ result: Int32, _ operation: @autoclosure () -> String) throws(UVError) -> Int32 {
        guard result >= 0 else { throw UVError(code: result, operation: operation()) }
        return result
    }
}

/// libuv error codes used by the layer, as `Int32`.
enum UVCode {
    static let eof = Int32(UV_EOF.rawValue)
    static let eagain = Int32(UV_EAGAIN.rawValue)
    static let ecanceled = Int32(UV_ECANCELED.rawValue)
    static let eaddrinuse = Int32(UV_EADDRINUSE.rawValue)
    static let econnrefused = Int32(UV_ECONNREFUSED.rawValue)
    static let enoent = Int32(UV_ENOENT.rawValue)
    static let enametoolong = Int32(UV_ENAMETOOLONG.rawValue)

    /// The longest Unix socket path the kernel takes (`sun_path` less its terminating NUL).
    static let maxUnixPathBytes = 107
}
