import Foundation
import Monarch
import MonarchClient
import Testing

@Suite("monarch get -X -H --data", .serialized)
struct GetOptionsTests {
    /// The origin's /echo answer as JSON.
    private func echoed(_ output: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(output)) as? [String: Any])
    }

    @Test("A mutation from the shell: method, repeated headers and a body reach the upstream; --data @FILE; --data alone is a POST")
    func mutation() async throws {
        try await withTaggedOrigin { cluster, _ in
            let address = "\(cluster.clientAddress)"
            let put = try await Spawned.run(
                Executables.monarch,
                ["get", "api/echo", "-X", "put", "-H", "X-Note: hi", "-H", "x-note:there", "--data", "hello", "--address", address])
            #expect(put.status == 0, "\(put.stderr)")
            let first = try echoed(put.stdout)
            #expect(first["method"] as? String == "PUT")
            #expect(first["body"] as? String == "hello")
            let headers = try #require(first["headers"] as? [String: String])
            #expect(headers.first { $0.key.lowercased() == "x-note" }?.value == "hi, there")

            try cluster.folder.write("payload.json", #"{"text":"from a file"}"#)
            let post = try await Spawned.run(
                Executables.monarch,
                ["get", "api/echo", "--data", "@\(cluster.folder.path)/payload.json", "-H", "content-type: application/json",
                 "--address", address])
            #expect(post.status == 0, "\(post.stderr)")
            let second = try echoed(post.stdout)
            #expect(second["method"] as? String == "POST")
            #expect(second["body"] as? String == #"{"text":"from a file"}"#)
        }
    }

    @Test("Bad -X, -H and --data values are refused with the option named (exit 64)")
    func badValues() async throws {
        for (arguments, message) in [
            (["-X", "P0ST"], "-X/--method: expected letters such as POST"),
            (["-H", "nocolon"], "-H/--header: expected NAME:VALUE"),
            (["-H", ": value"], "-H/--header: the name is empty"),
            (["--data", "@/nonexistent/file"], "--data: cannot read the file"),
        ] {
            let result = try await Spawned.run(Executables.monarch, ["get", "docs/hello.txt", "--address", "unix:/nonexistent.sock"] + arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }
}
