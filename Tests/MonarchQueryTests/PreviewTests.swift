#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
import MonarchQuery
import Testing

@Suite(.timeLimit(.minutes(1))) struct PreviewTests {
    private func fixtures() throws -> String {
        let folder = FileManager.default.temporaryDirectory.path + "/monarch-preview-\(UInt32.random(in: 0 ... .max))"
        try FileManager.default.createDirectory(atPath: folder + "/users", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: folder + "/users/1", contents: Data(#"{"value": 41}"#.utf8))
        _ = FileManager.default.createFile(atPath: folder + "/hello.txt", contents: Data("hi".utf8))
        return folder
    }

    struct UserOne: MonarchRequest {
        typealias Response = Counter
        var path: String { "users/1" }
        var previewData: Counter { Counter(value: 0) }
    }

    @Test("a typed request gets its preview data; with a fixture file, the file")
    func typed() async throws {
        #expect(try await MonarchPreview().perform(CounterRequest()) == Counter(value: -1))
        let folder = try fixtures()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let preview = MonarchPreview(fixtures: folder)
        #expect(try await preview.perform(UserOne()) == Counter(value: 41))
        #expect(try await preview.perform(CounterRequest()) == Counter(value: -1))
    }

    @Test("an untyped request gets the fixture file or notFound; paths cannot leave the folder")
    func untyped() async throws {
        let folder = try fixtures()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let preview = MonarchPreview(fixtures: folder)
        let hello = try await preview.perform(Request(path: "/hello.txt"))
        #expect(hello.body == Data("hi".utf8))
        #expect(hello.headers["content-type"] == "text/plain; charset=utf-8")
        for path in ["missing.txt", "users/../hello.txt", "users"] {
            do {
                _ = try await preview.perform(Request(path: path))
                Issue.record("\(path) answered")
            } catch {
                guard case .notFound = error else {
                    Issue.record("\(path): \(error)")
                    continue
                }
            }
        }
    }

    @Test("queries run over the preview, no cluster")
    func queriesOverPreview() async throws {
        let queries = QueryClient(service: MonarchPreview(latency: .milliseconds(5)))
        let query = queries.query(CounterRequest())
        #expect(try await query.value() == Counter(value: -1))
    }
}
