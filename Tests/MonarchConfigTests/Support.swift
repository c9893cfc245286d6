import Foundation
import MonarchConfig
import Testing

/// The package's root folder, found from this file's path.
let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

/// The error `parse` throws for `yaml`, or a recorded issue when it parses.
func parseError(
    _ yaml: String, baseDirectory: String = "/srv/monarch", environment: [String: String] = [:],
    sourceLocation: SourceLocation = #_sourceLocation
) -> ConfigError? {
    do {
        let configuration = try Configuration.parse(
            yaml: yaml, baseDirectory: baseDirectory, fileName: "test.yml", environment: environment
        )
        Issue.record("parsed, expected an error: \(configuration)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// A fresh empty directory under the temporary directory, with a short path.
func makeTemporaryDirectory() throws -> String {
    let path = "/tmp/monarch-config-\(UUID().uuidString.prefix(8))"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// Minimal `listen` and `domains` sections on lines 1 and 2, for appending the section under test.
let validHead = """
    listen: {clients: unix:c.sock, workers: unix:w.sock}
    domains: {static: [bundle]}

    """
