#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
import MonarchRouter

/// The bundle worker's provider: a request's path names a file under the bundle folder.
///
/// `GET` and `HEAD` only. A file that is there is a 200 response with its content type; one
/// that is not (or a directory, a hidden file, a symbolic link the store does not follow — one
/// pointing out of the folder among them) is a miss, so later providers may have it; a path
/// that names no file (`..`, an empty component, …) or something that is not a regular file
/// is a `forbidden` failure; a file larger than the store serves is a `responseTooLarge`
/// failure, one that cannot be read `readFailed`. An optional simulated latency delays every
/// answer (fixtures that behave like a slow network), and is cut short by cancellation.
public struct BundleProvider: RequestProvider {
    /// The files served.
    public let store: BundleStore
    /// How long each answer is held back.
    public let latency: Duration

    /// A provider serving `store`, each answer after `latency`.
    public init(store: BundleStore, latency: Duration = .zero) {
        self.store = store
        self.latency = latency
    }

    /// `bundle`.
    public var name: String { "bundle" }

    public func perform(_ request: Request) async -> ProviderOutcome {
        guard request.method == "GET" || request.method == "HEAD" else {
            return .failure(ProviderFailure(
                code: .invalidRequest, message: "the bundle serves GET and HEAD, not \(request.method)"))
        }
        let path: ResourcePath
        do {
            path = try ResourcePath(parsing: request.path)
        } catch {
            return .failure(ProviderFailure(code: .forbidden, message: "\(error)"))
        }
        if latency > .zero {
            do {
                try await Task.sleep(for: latency)
            } catch {
                return .failure(.cancelled)
            }
        }
        switch await store.read(path.components) {
        case .file(let body, let contentType):
            return .response(Response(
                status: 200, headers: ["content-type": contentType, "content-length": String(body.count)],
                body: request.method == "HEAD" ? Data() : Data(body), source: name))
        case .notFound(let reason):
            return .miss(reason: reason)
        case .refused(let reason):
            return .failure(ProviderFailure(code: .forbidden, message: reason))
        case .tooLarge(let reason):
            return .failure(ProviderFailure(code: .responseTooLarge, message: reason))
        case .failed(let reason):
            return .failure(ProviderFailure(code: .readFailed, message: reason))
        }
    }
}
