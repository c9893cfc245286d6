#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MonarchWire

/// The body of a mutation, with its content type.
///
/// ```swift
/// var body: RequestBody? { .json(NewUser(name: "Ada")) }
/// ```
public struct RequestBody: Sendable {
    private let bytes: Result<Data, MonarchError>
    /// The `Content-Type` the body is sent with; nil sends none.
    public let contentType: String?

    /// `data` as it is, sent with `contentType`.
    public init(_ data: Data, contentType: String? = "application/octet-stream") {
        bytes = .success(data)
        self.contentType = contentType
    }

    /// `value` encoded as JSON, sent as `application/json`. An encoding failure is reported
    /// when the request is performed (``MonarchError/chainFailure(_:)``, `invalidRequest`).
    public static func json<T: Encodable>(_ value: T, encoder: JSONEncoder = JSONEncoder()) -> RequestBody {
        do {
            return RequestBody(try encoder.encode(value), contentType: "application/json")
        } catch {
            return RequestBody(
                failure: .chainFailure(ChainError(.invalidRequest, "the body is not encodable as JSON: \(error)")),
                contentType: "application/json")
        }
    }

    /// `text` in UTF-8, sent as `text/plain; charset=utf-8`.
    public static func text(_ text: String) -> RequestBody {
        RequestBody(Data(text.utf8), contentType: "text/plain; charset=utf-8")
    }

    private init(failure: MonarchError, contentType: String?) {
        bytes = .failure(failure)
        self.contentType = contentType
    }

    /// The body's bytes.
    ///
    /// - Throws: the encoding failure of ``json(_:encoder:)``.
    public func data() throws(MonarchError) -> Data { try bytes.get() }
}

extension QueryItem {
    /// An item whose value is `value` written as text: `QueryItem("page", 2)`,
    /// `QueryItem("draft", true)`.
    public init(_ name: String, _ value: some LosslessStringConvertible) {
        self.init(name: name, value: value.description)
    }

    /// An item with no value (`?flag`).
    public init(flag name: String) {
        self.init(name: name, value: nil)
    }
}
