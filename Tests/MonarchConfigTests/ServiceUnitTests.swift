import Foundation
import Testing

@Suite("Service unit")
struct ServiceUnitTests {
    @Test("Examples/monarch.service runs monarch up as a notify service with reload, check first, a drain-long stop and the hardening options")
    func theUnitIsANotifyServiceWithHardening() throws {
        let unit = try String(contentsOfFile: packageRoot + "/Examples/monarch.service", encoding: .utf8)
        let settings = Set(unit.split(separator: "\n").filter { !$0.hasPrefix("#") && $0.contains("=") }.map(String.init))
        for expected in [
            "Type=notify", "ExecReload=/bin/kill -HUP $MAINPID", "NoNewPrivileges=yes", "ProtectSystem=strict",
            "PrivateTmp=yes", "ProtectHome=yes", "CapabilityBoundingSet=", "KillMode=mixed",
        ] {
            #expect(settings.contains(expected), "\(expected) is not in the unit")
        }
        #expect(settings.contains { $0.hasPrefix("ExecStart=") && $0.contains("monarch up --config") })
        #expect(settings.contains { $0.hasPrefix("ExecStartPre=") && $0.contains("monarch check --config") })
    }
}
