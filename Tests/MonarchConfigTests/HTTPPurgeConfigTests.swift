import Foundation
import MonarchConfig
import Testing

/// `http.purgeFrom`: who may send PURGE to the HTTP front door.
@Suite struct HTTPPurgeConfigTests {
    static let head = """
        listen: {clients: unix:c.sock, workers: unix:w.sock, http: [tcp:127.0.0.1:8088, unix:h.sock]}
        domains: {static: [bundle]}

        """

    @Test func nobodyMayPurgeByDefault() throws {
        let configuration = try Configuration.parse(yaml: Self.head, baseDirectory: "/x")
        #expect(configuration.http == Configuration.HTTP())
        #expect(configuration.http.purgeFrom.isEmpty)
        #expect(!configuration.http.allowsPurgeFromUnixSockets)
        #expect(!configuration.http.allowsPurge(fromHost: "127.0.0.1"))
    }

    @Test func addressesBlocksAndUnixAreRead() throws {
        let configuration = try Configuration.parse(
            yaml: Self.head + "http: {purgeFrom: [127.0.0.1, \"::1\", unix, 10.0.0.0/8, \"fd00::/8\"]}\n", baseDirectory: "/x")
        let http = configuration.http
        #expect(http.purgeFrom.map(\.description) == ["127.0.0.1", "::1", "unix", "10.0.0.0/8", "fd00::/8"])
        #expect(http.allowsPurgeFromUnixSockets)
        for allowed in ["127.0.0.1", "::1", "10.200.3.4", "::ffff:127.0.0.1", "fd12::5"] {
            #expect(http.allowsPurge(fromHost: allowed), "\(allowed)")
        }
        for refused in ["127.0.0.2", "::2", "11.0.0.1", "fe80::1", "localhost", ""] {
            #expect(!http.allowsPurge(fromHost: refused), "\(refused)")
        }
        let one = try Configuration.parse(yaml: Self.head + "http: {purgeFrom: unix}\n", baseDirectory: "/x")
        #expect(one.http.purgeFrom == [.unixSocket])
        #expect(!one.http.allowsPurge(fromHost: "127.0.0.1"))
        let empty = try Configuration.parse(yaml: Self.head + "http:\n", baseDirectory: "/x")
        #expect(empty.http.purgeFrom.isEmpty)
    }

    @Test func addressRangesMatchTheirBitsOnly() throws {
        let block = try #require(AddressRange(parsing: "192.168.4.0/22"))
        #expect(block.contains("192.168.7.255") && block.contains("192.168.4.0"))
        #expect(!block.contains("192.168.8.0") && !block.contains("192.168.3.255"))
        let all = try #require(AddressRange(parsing: "0.0.0.0/0"))
        #expect(all.contains("8.8.8.8") && !all.contains("::1"), "an IPv4 block holds IPv4 addresses only")
        #expect(try #require(AddressRange(parsing: "::/0")).contains("::1"))
        for bad in ["10.0.0.1/8", "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/+8", "::1/129", "1.2.3", "host", "1.2.3.4/8/9"] {
            #expect(AddressRange(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test func theExampleShowsEveryTopLevelKeyAndItsPurgeSnippetParses() throws {
        let text = try String(contentsOfFile: packageRoot + "/Examples/monarch.yml", encoding: .utf8)
        for key in Configuration.topLevelKeys {
            #expect(text.contains("\n\(key):") || text.contains("\n# \(key):"), "Examples/monarch.yml does not show \(key)")
        }
        let snippet = try #require(text.range(of: "# http:\n#   purgeFrom: [127.0.0.1, \"::1\", unix]\n"))
        let uncommented = text.replacingCharacters(in: snippet, with: "http:\n  purgeFrom: [127.0.0.1, \"::1\", unix]\n")
        let example = try Configuration.parse(yaml: uncommented, baseDirectory: packageRoot + "/Examples")
        #expect(example.http.purgeFrom.map(\.description) == ["127.0.0.1", "::1", "unix"])
    }

    @Test(arguments: [
        ("http: {purgeFrom: [127.0.0.1, example.com]}", "http.purgeFrom[1]", "expected unix, an IP address or a CIDR block"),
        ("http: {purgeFrom: [10.0.0.1/8]}", "http.purgeFrom[0]", "no bits set past a block's prefix"),
        ("http: {purgeFrom: [127.0.0.1, 127.0.0.1/32]}", "http.purgeFrom[1]", "127.0.0.1 is listed twice"),
        ("http: {purgeFrom: [\"\"]}", "http.purgeFrom[0]", "got an empty string"),
        ("http: {purgeFrom: {a: b}}", "http.purgeFrom", "expected unix, an IP address"),
        ("http: {purgeFom: [unix]}", "http.purgeFom", "did you mean \"purgeFrom\"?"),
        ("http: [unix]", "http", "expected a mapping"),
    ])
    func badEntriesAreRefusedAtTheirKey(yaml: String, keyPath: String, gist: String) throws {
        let error = try #require(parseError(Self.head + yaml + "\n"))
        #expect(error.keyPath == keyPath, "\(error)")
        #expect(error.line == 3, "\(error)")
        #expect(error.problem.contains(gist), "\(error)")
    }
}
