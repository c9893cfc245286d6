#if canImport(Glibc)
import Glibc
#endif

/// A range of IP addresses: one address (`127.0.0.1`, `::1`) or a CIDR block (`10.0.0.0/8`,
/// `fd00::/8`), IPv4 or IPv6. An IPv4 range also holds the IPv4-mapped IPv6 form of its
/// addresses (`::ffff:127.0.0.1`), as a dual-stack socket reports an IPv4 peer.
public struct AddressRange: Sendable, Hashable, CustomStringConvertible {
    /// The network's bytes (4 for IPv4, 16 for IPv6), the bits past the prefix cleared.
    public let bytes: [UInt8]
    /// How many leading bits an address must share with ``bytes``: 0 to 32, or 0 to 128.
    public let prefixLength: Int

    /// The range `text` names: an address, or an address, `/` and a prefix length; nil when it
    /// names none (a host name, a length out of range, bits set past the prefix).
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = Self.bytes(of: String(parts[0])) else { return nil }
        let bits = address.count * 8
        var length = bits
        if parts.count == 2 {
            guard parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), let given = Int(parts[1]), (0...bits).contains(given)
            else { return nil }
            length = given
        }
        // 10.0.0.1/8 is refused rather than read as 10.0.0.0/8: its author meant something else.
        guard Self.masked(address, to: length) == address else { return nil }
        self.bytes = address
        self.prefixLength = length
    }

    /// Whether the address `host` (in text, as a socket reports a peer) is in the range; false
    /// for text that is no IP address.
    public func contains(_ host: String) -> Bool {
        guard var address = Self.bytes(of: host) else { return false }
        if bytes.count == 4, address.count == 16, address.prefix(12).elementsEqual(Self.mappedIPv4Prefix) {
            address = Array(address.suffix(4))
        }
        return address.count == bytes.count && Self.masked(address, to: prefixLength) == bytes
    }

    /// `127.0.0.1`, `10.0.0.0/8`, `::1`: a single address without its length.
    public var description: String {
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let address = bytes.withUnsafeBytes { raw in inet_ntop(family, raw.baseAddress, &text, socklen_t(text.count)) }
        let shown = address == nil ? "?" : String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return prefixLength == bytes.count * 8 ? shown : "\(shown)/\(prefixLength)"
    }

    /// The first 12 bytes of an IPv4-mapped IPv6 address.
    private static let mappedIPv4Prefix: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF]

    /// The bytes of the IPv4 or IPv6 address `text`; nil when it is neither.
    private static func bytes(of text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// `address` with the bits past the first `length` cleared.
    private static func masked(_ address: [UInt8], to length: Int) -> [UInt8] {
        address.enumerated().map { index, byte in
            let kept = min(max(length - index * 8, 0), 8)
            return kept == 8 ? byte : byte & ~(UInt8(0xFF) >> kept)
        }
    }
}
