import ArgumentParser
import Foundation
import Monarch

/// `monarch get`'s `-X`, `-H` and `--data`: the method, headers and body of the request.
enum RequestOptions {
    /// Sets `request`'s method (`method`, else `POST` when there is a body, else `GET`),
    /// headers (`NAME:VALUE` each; a name given twice gets its values joined by `", "`) and
    /// body (`data`: the text, `@FILE` a file's bytes, `@-` standard input).
    ///
    /// - Throws: ``ValidationError`` naming the bad option: a method that is not upper-case
    ///   letters, a header without `:` or with an empty name, a file that cannot be read.
    static func apply(method: String?, headers: [String], data: String?, to request: inout Request) throws {
        if let data { request.body = try body(data) }
        if let method {
            let upper = method.uppercased()
            guard !upper.isEmpty, upper.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
                throw ValidationError("-X/--method: expected letters such as POST, got \"\(method)\"")
            }
            request.method = upper
        } else if data != nil {
            request.method = "POST"
        }
        for header in headers {
            guard let colon = header.firstIndex(of: ":") else {
                throw ValidationError("-H/--header: expected NAME:VALUE, got \"\(header)\"")
            }
            let name = header[..<colon].trimmingCharacters(in: .whitespaces)
            let value = header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { throw ValidationError("-H/--header: the name is empty in \"\(header)\"") }
            if let existing = request.headers.first(where: { $0.key.lowercased() == name.lowercased() }) {
                request.headers[existing.key] = existing.value + ", " + value
            } else {
                request.headers[name] = value
            }
        }
    }

    /// The bytes `--data` names.
    static func body(_ data: String) throws -> Data {
        guard data.hasPrefix("@") else { return Data(data.utf8) }
        let file = String(data.dropFirst())
        if file == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        guard let bytes = FileManager.default.contents(atPath: file) else {
            throw ValidationError("--data: cannot read the file \"\(file)\"")
        }
        return bytes
    }
}
