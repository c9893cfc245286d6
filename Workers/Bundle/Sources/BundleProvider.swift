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
/// failure, one that cannot be read `readFailed`. A file's answer carries an `ETag` made from
/// its bytes, and a request whose `If-None-Match` (or `If-Modified-Since`) it meets gets
/// `304 Not Modified`. An optional simulated latency delays every answer (fixtures that behave
/// like a slow network), and is cut short by cancellation.
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

    /// A strong entity tag for a file of `body`: its length and a 64-bit FNV-1a hash of its
    /// bytes, so that any edit changes it, and every worker serving the folder agrees.
    public static func entityTag(of body: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in body {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return "\"\(String(body.count, radix: 16))-\(String(hash, radix: 16))\""
    }

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
            let headers = ["content-type": contentType, "content-length": String(body.count), "etag": Self.entityTag(of: body)]
            if HTTPConditions.isNotModified(requestHeaders: request.headers, responseHeaders: headers, status: 200) {
                return .response(Response(status: 304, headers: HTTPConditions.notModifiedHeaders(of: headers), source: name))
            }
            return .response(Response(
                status: 200, headers: headers, body: request.method == "HEAD" ? Data() : Data(body), source: name))
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
