import Foundation
import Testing

/// `monarch-example` (Examples/ClientExample), the README's program, against a real cluster.
@Suite("The client example", .serialized)
struct ClientExampleTests {
    @Test("monarch-example reads a user, counts, increments and sees its query refreshed")
    func runsAgainstACluster() async throws {
        try await withClientOriginCluster { cluster, _ in
            try cluster.folder.write("Bundle/data/users/1.json", #"{"id": 1, "name": "Ada Lovelace"}"#)
            let example = try Spawned(
                Executables.directory + "/monarch-example", ["--address", cluster.clientAddress.description])
            let status = try await example.waitForExit(timeout: 60)
            #expect(status == 0, "stderr:\n\(example.stderr.text)")
            #expect(example.stdout.text == """
                user: Ada Lovelace
                count: 0
                incremented to: 1
                the query now holds: 1

                """, "stderr:\n\(example.stderr.text)")
        }
    }

    @Test("monarch-example --preview needs no cluster")
    func preview() async throws {
        let example = try Spawned(Executables.directory + "/monarch-example", ["--preview"])
        #expect(try await example.waitForExit(timeout: 60) == 0, "stderr:\n\(example.stderr.text)")
        // Nothing changes in a preview, and the last line says why the query still holds 0.
        #expect(example.stdout.text == """
            user: Preview User
            count: 0
            incremented to: 1
            the query now holds: 0
            (a preview: every answer is its request's previewData, so nothing was incremented)

            """, "\(example.stdout.text)")
    }
}
