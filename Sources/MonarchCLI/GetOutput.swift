#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Monarch
import MonarchClient
import MonarchWire

/// How `monarch get` prints answers and errors.
enum GetOutput {
    /// The JSON form of a response.
    struct ResponseJSON: Encodable {
        var status: Int
        var source: String?
        var headers: [String: String]
        var body: String?
        var bodyBase64: String?
        var stale: Bool
        var ageMs: UInt64?
    }

    /// The JSON form of an error.
    struct ErrorJSON: Encodable {
        var error: FailureMessage.Detail
    }

    /// Prints the body raw, or the response as one JSON object.
    static func print(_ response: Response, json: Bool) {
        guard json else {
            writeAll(Array(response.body), to: STDOUT_FILENO)
            return
        }
        let text = String(bytes: response.body, encoding: .utf8)
        write(ResponseJSON(
            status: response.status, source: response.source, headers: response.headers,
            body: text, bodyBase64: text == nil ? response.body.base64EncodedString() : nil,
            stale: response.stale, ageMs: response.age?.wholeMilliseconds))
    }

    /// Prints `error` on standard error, or with `--json` as one JSON object on standard
    /// output alone (`{"error": {...}}`), so a script reads one stream.
    static func report(_ error: MonarchError, json: Bool) {
        guard json else {
            printToStandardError("monarch get: \(error.chainError.map { "\($0)" } ?? "\(error)")")
            return
        }
        let detail: FailureMessage.Detail
        switch error {
        case .transport(let transport) where transport.kind != .overloaded:
            detail = .init(code: FailureCode(rawValue: transport.kind.rawValue), message: transport.message)
        case .upstreamStatus, .decoding, .transport:
            detail = .init(code: "failed", message: "\(error)")
        case .notFound(let chain), .chainFailure(let chain), .timeout(let chain): detail = chain.detail
        case .cancelled: detail = .init(code: .cancelled, message: "cancelled")
        }
        write(ErrorJSON(error: detail))
    }

    /// Prints a usage error found while running (an invalid `--deadline`, an invalid address) like ``report(_:json:)`` does: on standard
    /// error, or with `--json` as `{"error": {"code": "invalidArguments", ...}}` on standard
    /// output alone.
    static func reportUsage(_ message: String, json: Bool) {
        guard json else {
            printToStandardError("monarch get: \(message)")
            return
        }
        write(ErrorJSON(error: .init(code: "invalidArguments", message: message)))
    }

    /// Prints a configuration that cannot be used like ``reportUsage(_:json:)`` does, with
    /// the code `invalidConfiguration` in JSON.
    static func reportConfigurationProblem(_ problem: ConfigurationProblem, json: Bool) {
        guard json else {
            printToStandardError("monarch get: \(problem)")
            return
        }
        write(ErrorJSON(error: .init(code: "invalidConfiguration", message: problem.description)))
    }

    private static func write(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        writeAll(Array(data) + [UInt8(ascii: "\n")], to: STDOUT_FILENO)
    }
}
