/// Where a Redis store lives, from `redis://HOST:PORT/DB` (port 6379 and database 0 when left
/// out; `[::1]` for an IPv6 address).
///
/// `rediss://` (TLS) is refused with an error that says why: the hiredis that Debian ships
/// (0.14) has no TLS support. A password in the address is refused too: it would show in
/// `ps`; it comes from the `MONARCH_REDIS_PASSWORD` environment variable instead.
public struct RedisAddress: Sendable, Equatable, CustomStringConvertible {
    /// The host name or IP address.
    public var host: String
    /// The TCP port.
    public var port: Int
    /// The database number (`SELECT`).
    public var database: Int

    /// An address.
    public init(host: String, port: Int = 6379, database: Int = 0) {
        self.host = host
        self.port = port
        self.database = database
    }

    /// Parses `redis://HOST[:PORT][/DB]`.
    ///
    /// - Throws: ``RedisAddressError`` saying what is wrong (the scheme, TLS, a password, the
    ///   port, the database).
    public init(parsing text: String) throws(RedisAddressError) {
        if text.hasPrefix("rediss://") {
            throw RedisAddressError(
                "\(text): rediss:// (TLS) is not supported: the hiredis Monarch builds on (Debian's libhiredis 0.14) has no TLS; "
                    + "reach Redis over a private network or a TLS tunnel (stunnel, spiped) as redis://")
        }
        guard text.hasPrefix("redis://") else {
            throw RedisAddressError("expected redis://HOST:PORT/DB, got \"\(text)\"")
        }
        var rest = Substring(text.dropFirst("redis://".count))
        guard !rest.contains("@") else {
            throw RedisAddressError(
                "\(text): no password in the address (it would show in ps); give it in MONARCH_REDIS_PASSWORD, "
                    + "or as workers.cache.password: ${VARIABLE} in the configuration")
        }
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let number = rest[rest.index(after: slash)...]
            if !number.isEmpty {
                guard let parsed = Int(number), parsed >= 0 else {
                    throw RedisAddressError("\(text): the database must be a number such as /0, got \"/\(number)\"")
                }
                database = parsed
            }
            rest = rest[..<slash]
        }
        var host = rest
        var port = 6379
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw RedisAddressError("\(text): an IPv6 address needs its closing ]") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let parsed = Int(after.dropFirst()), (1...65_535).contains(parsed) else {
                    throw RedisAddressError("\(text): expected a port from 1 to 65535 after the address")
                }
                port = parsed
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let parsed = Int(rest[rest.index(after: colon)...]), (1...65_535).contains(parsed) else {
                throw RedisAddressError("\(text): expected a port from 1 to 65535, got \"\(rest[rest.index(after: colon)...])\"")
            }
            port = parsed
        }
        guard !host.isEmpty else { throw RedisAddressError("\(text): the host is missing") }
        self.init(host: String(host), port: port, database: database)
    }

    /// `redis://HOST:PORT/DB`.
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "redis://\(shownHost):\(port)/\(database)"
    }
}

/// Why a Redis address could not be used.
public struct RedisAddressError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with it.
    public var message: String

    /// An error saying `message`.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
