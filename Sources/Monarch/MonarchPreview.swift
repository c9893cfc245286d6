#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MonarchWire

/// A ``MonarchService`` for previews, tests and demos: it opens no socket and runs no chain.
///
/// - A typed request (``MonarchRequest``) gets the fixture file at its path under
///   ``fixtures`` when there is one (decoded as the real answer would be), and its
///   ``MonarchRequest/previewData`` otherwise: every typed request has an answer.
/// - An untyped ``Request`` gets the fixture file at its path (status 200, a content type
///   from the file's extension), or ``MonarchError/notFound(_:)``.
///
/// Fixture files are read off Swift's cooperative pool (on a thread of their own), so a slow
/// file system never holds up other tasks.
///
/// ```swift
/// let service: any MonarchService = MonarchPreview(fixtures: "Fixtures")
/// let user = try await service.perform(CurrentUser())   // Fixtures/users/me, else .example
/// ```
public struct MonarchPreview: MonarchService {
    /// The folder fixture files are read from; nil serves no files.
    public var fixtures: String?
    /// How long each answer takes, to show loading states; none by default.
    public var latency: Duration

    /// A preview service reading fixtures from the folder `fixtures` (none when nil).
    public init(fixtures: String? = nil, latency: Duration = .zero) {
        self.fixtures = fixtures
        self.latency = latency
    }

    /// The fixture file at `request.path` (a leading `/` and the query ignored).
    ///
    /// - Throws: ``MonarchError/notFound(_:)`` when there is no such file (or the path leaves
    ///   the folder: a `..` component), ``MonarchError/cancelled`` when the task is cancelled
    ///   during ``latency``.
    public func perform(_ request: Request) async throws(MonarchError) -> Response {
        try await wait()
        guard let body = await fixture(at: request.path) else {
            let attempt = ProviderAttempt(provider: "preview", outcome: .miss, message: "no fixture \(request.path)")
            throw .notFound(ChainError(.exhausted, "no provider answered: preview: miss", attempts: [attempt]))
        }
        return Response(headers: ["content-type": Self.contentType(of: request.path)], body: body, source: "preview")
    }

    /// The fixture at the request's path, decoded; its ``MonarchRequest/previewData`` when
    /// there is none.
    ///
    /// - Throws: ``MonarchError/decoding(type:reason:bodyPrefix:)`` for a fixture that does not
    ///   decode, ``MonarchError/cancelled`` when cancelled during ``latency``.
    public func perform<R: MonarchRequest>(_ request: R) async throws(MonarchError) -> R.Response {
        try await wait()
        guard let body = await fixture(at: request.path) else { return request.previewData }
        return try Self.decodeAnswer(Response(body: body, source: "preview"), to: request)
    }

    private func wait() async throws(MonarchError) {
        guard latency > .zero else { return }
        do {
            try await Task.sleep(for: latency)
        } catch {
            throw .cancelled
        }
    }

    /// The bytes of the fixture for `path`, nil when there is none or the path would leave the
    /// folder; read without blocking the caller's thread (``FileReads``).
    private func fixture(at path: String) async -> Data? {
        guard let fixtures else { return nil }
        let bare = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        let components = bare.split(separator: "/")
        guard !components.isEmpty, !components.contains(where: { $0 == ".." || $0 == "." }) else { return nil }
        return await FileReads.contents(ofFileAt: fixtures + "/" + components.joined(separator: "/"))
    }

    /// A content type for a file name's extension.
    static func contentType(of path: String) -> String {
        switch path.split(separator: ".").last.map({ $0.lowercased() }) {
        case "json": "application/json"
        case "txt": "text/plain; charset=utf-8"
        case "html": "text/html; charset=utf-8"
        case "md": "text/markdown; charset=utf-8"
        default: "application/octet-stream"
        }
    }
}
