#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a ``CacheEntry`` is kept in one Redis string, so that a `SET … PX` stores it with its
/// metadata in one round trip and a `GET` reads both back:
///
/// `MCE1` (4 bytes), the metadata's length (4 bytes, big-endian), the metadata as JSON
/// (`{"status":200,"headers":{…},"storedAtMs":…,"ttlMs":…,"tags":[…]}`), then the body's bytes
/// as they are. (The tag invalidation script in ``RedisTagScripts`` reads the tags there.)
enum RedisEntryCodec {
    private static let magic: [UInt8] = Array("MCE1".utf8)

    private struct Metadata: Codable {
        var status: Int
        var headers: [String: String]
        var storedAtMs: Int64
        var ttlMs: Int64?
        /// Absent in entries written before tags.
        var tags: [String]?
    }

    /// The entry as the bytes of one Redis value.
    static func encode(_ entry: CacheEntry) -> [UInt8] {
        let metadata = Metadata(
            status: entry.status, headers: entry.headers, storedAtMs: entry.storedAtMs, ttlMs: entry.ttlMs, tags: entry.tags)
        // Encoding a struct of strings and integers cannot fail.
        let json = (try? JSONEncoder().encode(metadata)) ?? Data("{}".utf8)
        var bytes = magic
        bytes.reserveCapacity(8 + json.count + entry.body.count)
        let length = UInt32(json.count)
        bytes += [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
        bytes += json
        bytes += entry.body
        return bytes
    }

    /// The entry in `bytes`, or nil when they are not an entry this codec wrote.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> CacheEntry? {
        guard bytes.count >= 8, bytes.prefix(4).elementsEqual(magic) else { return nil }
        let length = bytes[4..<8].reduce(0) { $0 << 8 | Int($1) }
        guard length <= bytes.count - 8 else { return nil }
        let json = Data(bytes[8..<(8 + length)])
        guard let metadata = try? JSONDecoder().decode(Metadata.self, from: json) else { return nil }
        return CacheEntry(
            status: metadata.status, headers: metadata.headers, body: Data(bytes[(8 + length)...]),
            storedAtMs: metadata.storedAtMs, ttlMs: metadata.ttlMs, tags: metadata.tags ?? [])
    }
}
