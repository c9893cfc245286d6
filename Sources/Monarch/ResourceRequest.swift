#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A request that knows the type of its answer.
///
/// ```swift
/// struct UserRequest: ResourceRequest {
///     typealias Response = User
///     var id: Int
///     var request: Request { Request(path: "users/\(id)", domain: .api) }
/// }
/// let user = try await monarch.perform(UserRequest(id: 1))
/// ```
public protocol ResourceRequest: Sendable {
    /// What the response body decodes to.
    associatedtype Response: Decodable & Sendable
    /// The untyped request sent down the chain.
    var request: Request { get }
    /// A stand-in body used when the chain fails (fixtures, previews); nil by default.
    var previewData: Data? { get }
    /// Turns a body into a ``Response``; JSON by default.
    func decode(_ body: Data) throws -> Response
}

extension ResourceRequest {
    /// No preview data.
    public var previewData: Data? { nil }

    /// Decodes `body` as JSON.
    public func decode(_ body: Data) throws -> Response {
        try JSONDecoder().decode(Response.self, from: body)
    }
}
