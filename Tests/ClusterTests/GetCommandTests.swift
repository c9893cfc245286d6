import Foundation
import Testing

/// `monarch get` as a process: what it prints and how it exits.
@Suite("monarch get")
struct GetCommandTests {
    private func json(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any], "not a JSON object: \(String(decoding: bytes, as: UTF8.self))")
    }

    @Test("Body on stdout, --json fields, a binary body as bodyBase64, errors and exit codes, MONARCH_ADDRESS, --config")
    func getCommand() async throws {
        try await TestCluster.with { cluster in
            let address = "\(cluster.clientAddress)"
            let monarch = Executables.monarch

            let plain = try await Spawned.run(monarch, ["get", "docs/hello.txt", "--address", address])
            #expect(plain.status == 0, "\(plain.stderr)")
            #expect(plain.stdout == ClusterOptions.files["docs/hello.txt"]!)

            let described = try await Spawned.run(monarch, ["get", "/docs/data.json", "--json", "--address", address])
            #expect(described.status == 0, "\(described.stderr)")
            let object = try json(described.stdout)
            #expect(object["status"] as? Int == 200)
            #expect(object["source"] as? String == "bundle")
            #expect(object["body"] as? String == #"{"answer":42}"#)
            #expect(object["bodyBase64"] == nil)
            let headers = try #require(object["headers"] as? [String: Any])
            #expect(headers["content-type"] as? String == "application/json; charset=utf-8")

            let binary = try await Spawned.run(monarch, ["get", "docs/blob.bin", "--json", "--address", address])
            #expect(binary.status == 0, "\(binary.stderr)")
            let binaryObject = try json(binary.stdout)
            #expect(binaryObject["body"] == nil)
            let base64 = try #require(binaryObject["bodyBase64"] as? String)
            #expect(Data(base64Encoded: base64) == Data(ClusterOptions.files["docs/blob.bin"]!))
            // Without --json the bytes come out as they are.
            let raw = try await Spawned.run(monarch, ["get", "docs/blob.bin", "--address", address])
            #expect(raw.stdout == ClusterOptions.files["docs/blob.bin"]!)

            let missing = try await Spawned.run(monarch, ["get", "docs/missing.txt", "--address", address])
            #expect(missing.status == 1)
            #expect(missing.stdout.isEmpty)
            #expect(missing.stderr.contains("bundle"), "\(missing.stderr)")
            #expect(missing.stderr.contains("miss"), "\(missing.stderr)")

            let missingJSON = try await Spawned.run(monarch, ["get", "docs/missing.txt", "--json", "--address", address])
            #expect(missingJSON.status == 1)
            let error = try #require(try json(missingJSON.stdout)["error"] as? [String: Any])
            #expect(error["code"] as? String == "exhausted")
            let attempts = try #require(error["attempts"] as? [[String: Any]])
            #expect(attempts.count == 1)
            #expect(attempts.first?["provider"] as? String == "bundle")
            #expect(attempts.first?["outcome"] as? String == "miss")

            let noRoute = try await Spawned.run(monarch, ["get", "nowhere/x", "--json", "--address", address])
            #expect(noRoute.status == 1)
            #expect((try json(noRoute.stdout)["error"] as? [String: Any])?["code"] as? String == "noRoute")

            let deadline = try await Spawned.run(monarch, ["get", "docs/hello.txt", "--deadline", "soon", "--address", address])
            #expect(deadline.status != 0 && deadline.status != 1, "an invalid option is a usage error")

            let unreachable = try await Spawned.run(monarch, ["get", "docs/hello.txt", "--address", "unix:/nonexistent/x.sock"])
            #expect(unreachable.status == 2)
            #expect(!unreachable.stderr.isEmpty)

            let fromEnvironment = try await Spawned.run(
                monarch, ["get", "docs/guide/intro.md"], environment: ["MONARCH_ADDRESS": address])
            #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderr)")
            #expect(fromEnvironment.stdout == ClusterOptions.files["docs/guide/intro.md"]!)

            // --address wins over MONARCH_ADDRESS.
            let overridden = try await Spawned.run(
                monarch, ["get", "docs/hello.txt", "--address", address],
                environment: ["MONARCH_ADDRESS": "unix:/nonexistent/x.sock"])
            #expect(overridden.status == 0, "\(overridden.stderr)")

            let fromConfig = try await Spawned.run(
                monarch, ["get", "docs/other.txt", "--config", cluster.configPath], environment: ["MONARCH_ADDRESS": ""])
            #expect(fromConfig.status == 0, "\(fromConfig.stderr)")
            #expect(fromConfig.stdout == ClusterOptions.files["docs/other.txt"]!)
        }
    }
}
