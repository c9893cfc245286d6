import MonarchWire
import Testing

@Suite struct SocketAddressTests {
    @Test func parsesTheConfigurationForms() throws {
        #expect(try SocketAddress(parsing: "unix:run/monarch.sock") == .unix(path: "run/monarch.sock"))
        #expect(try SocketAddress(parsing: "tcp:127.0.0.1:7400") == .tcp(host: "127.0.0.1", port: 7400))
        #expect(try SocketAddress(parsing: "tcp:[::1]:7401") == .tcp(host: "::1", port: 7401))
        #expect(try SocketAddress(parsing: "tcp:localhost:0") == .tcp(host: "localhost", port: 0))
    }

    @Test func printsTheFormItParses() throws {
        for text in ["unix:/tmp/a.sock", "tcp:127.0.0.1:80", "tcp:[::1]:7401"] {
            #expect(try SocketAddress(parsing: text).description == text)
        }
    }

    @Test(arguments: [
        "", "unix:", "tcp:", "tcp:127.0.0.1", "tcp:127.0.0.1:http", "tcp:127.0.0.1:70000", "tcp::80",
        "http://127.0.0.1:80", "tcp:[::1]7400", "unix:/tmp/" + String(repeating: "x", count: 120),
    ])
    func rejectsMalformedAddresses(_ text: String) {
        #expect(throws: SocketAddressError.self) { try SocketAddress(parsing: text) }
    }
}
