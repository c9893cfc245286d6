import MonarchConfig
import Testing

@Suite struct RouteTTLTests {
    @Test func aTTLOfZeroLeavesFreshnessToTheUpstream() throws {
        let yaml = "listen: {clients: unix:c.sock, workers: unix:w.sock}\ndomains: {s: [bundle]}\nroutes: [{match: \"...\", domain: s, ttl: 0s}]\nworkers: {bundle: {root: b}}\n"
        #expect(try Configuration.parse(yaml: yaml, baseDirectory: "/x").routes.first?.ttl == .zero)
    }
}
