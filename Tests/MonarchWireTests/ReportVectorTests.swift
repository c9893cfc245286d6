import Foundation
import MonarchWire
import Testing

/// The report vectors of Protocols/vectors/reports.json (the data of `status` and `scale`
/// results), which Protocols/check.py holds against the JSON Schemas: the Swift types read
/// exactly the valid ones.
@Suite struct ReportVectorTests {
    struct Vector: Decodable, CustomTestStringConvertible {
        var name: String
        var schema: String
        var valid: Bool
        var value: JSONValue
        var testDescription: String { name }
    }

    static let vectors: [Vector] = {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Protocols/vectors/reports.json")
        struct File: Decodable { var reports: [Vector] }
        do {
            return try JSONDecoder().decode(File.self, from: Data(contentsOf: url)).reports
        } catch {
            fatalError("cannot read \(url.path): \(error)")
        }
    }()

    @Test(arguments: vectors)
    func decodesExactlyTheValidReports(vector: Vector) throws {
        let data = try JSONEncoder().encode(vector.value)
        let decode: () throws -> any Encodable = {
            switch vector.schema {
            case "status-report": try JSONDecoder().decode(StatusReport.self, from: data)
            case "scale-report": try JSONDecoder().decode(ScaleReport.self, from: data)
            default: throw CocoaError(.featureUnsupported)
            }
        }
        if vector.valid {
            let report = try decode()
            // What the type keeps survives a round trip through a result message.
            let result = ResultMessage(id: 1, report: report)
            #expect(result.data != nil)
            if let status = report as? StatusReport { #expect(try result.report(as: StatusReport.self) == status) }
            if let scale = report as? ScaleReport { #expect(try result.report(as: ScaleReport.self) == scale) }
        } else {
            #expect(throws: (any Error).self) { _ = try decode() }
        }
    }

    @Test("There are valid and invalid vectors of both reports")
    func coverage() {
        for schema in ["status-report", "scale-report"] {
            #expect(Self.vectors.contains { $0.schema == schema && $0.valid })
            #expect(Self.vectors.contains { $0.schema == schema && !$0.valid })
        }
    }
}
