#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The payload form of the `rawBodies` extension (protocol section 2.1): a message that carries
/// a body — `request`, `response` or `store` — written as the byte 0x01, the 4-byte big-endian
/// length `J` of its JSON, `J` bytes of JSON without the `body` field, then the body's bytes
/// as they are, up to the end of the payload.
///
/// Only peers that agreed to the extension in the handshake (``WireFeature/rawBodies``) send
/// or accept it; a raw-body payload decodes to the very message whose `body` holds the same
/// bytes in base64.
enum RawBodyPayload {
    /// The first byte of a raw-body payload; a JSON payload never starts with it.
    static let marker: UInt8 = 0x01
    /// The marker and the JSON's length.
    static let headerCount = 1 + BigEndianLength.byteCount

    /// The message in a raw-body `payload` (its first byte is ``marker``), its JSON decoded by
    /// `decodeJSON`; its body copied out of the payload, or, when `block` (the ``FrameBlock``
    /// the payload lies in) is given, left where it lies, the body keeping the block.
    ///
    /// - Throws: ``ProtocolError``: `invalidJSON` when the header or the JSON's length does not
    ///   fit the payload, `invalidField` when the message carries no body or gives its body in
    ///   the JSON too; otherwise what `decodeJSON` throws.
    static func decode(
        _ payload: UnsafeRawBufferPointer, keeping block: FrameBlock? = nil,
        json decodeJSON: (UnsafeRawBufferPointer) throws(ProtocolError) -> WireMessage
    ) throws(ProtocolError) -> WireMessage {
        guard payload.count >= headerCount else {
            throw ProtocolError(.invalidJSON, "a raw-body payload of \(payload.count) bytes is shorter than its 5-byte header")
        }
        let jsonCount = Int(BigEndianLength.read(payload, at: 1))
        guard jsonCount >= 1, jsonCount <= payload.count - headerCount else {
            throw ProtocolError(
                .invalidJSON,
                "a raw-body payload announces \(jsonCount) bytes of JSON, but \(payload.count - headerCount) follow its header")
        }
        let json = UnsafeRawBufferPointer(rebasing: payload[headerCount..<headerCount + jsonCount])
        let body = UnsafeRawBufferPointer(rebasing: payload[(headerCount + jsonCount)...])
        let message = try decodeJSON(json)
        // The body where it lies in the block, else one copy of it out of the frame.
        func bytes() -> Data {
            guard !body.isEmpty else { return Data() }
            guard let block else { return Data(bytes: body.baseAddress!, count: body.count) }
            return Data(
                bytesNoCopy: UnsafeMutableRawPointer(mutating: body.baseAddress!), count: body.count,
                deallocator: .custom { _, _ in withExtendedLifetime(block) {} })
        }
        switch message {
        case .request(var request):
            guard request.body == nil else { throw givenTwice(message) }
            request.body = bytes()
            return .request(request)
        case .response(var response):
            guard response.content == nil else { throw givenTwice(message) }
            response.content = MessageBody(bytes())
            return .response(response)
        case .store(var store):
            guard store.content == nil else { throw givenTwice(message) }
            store.content = MessageBody(bytes())
            return .store(store)
        default:
            throw ProtocolError(
                .invalidField, "field \"body\": a \(message.type) carries no body, but a raw body follows it", id: message.id)
        }
    }

    /// The body `message` carries, when it is a `request`, `response` or `store` with one.
    static func body(of message: WireMessage) -> MessageBody? {
        switch message {
        case .request(let request): request.body.map(MessageBody.init)
        case .response(let response): response.content
        case .store(let store): store.content
        default: nil
        }
    }

    /// Appends `message`, which carries `body`, as a raw-body payload to `output`.
    static func append(_ message: WireMessage, body: MessageBody, to output: inout [UInt8]) {
        appendHead(of: message, to: &output)
        body.appendBytes(to: &output)
    }

    /// Appends the raw-body payload of `message` but for its body's bytes (the marker, the
    /// JSON's length, the JSON) to `output`: the payload is whole once the body follows.
    static func appendHead(of message: WireMessage, to output: inout [UInt8]) {
        let start = output.count
        output.append(marker)
        output.append(contentsOf: [0, 0, 0, 0])
        let encoded = HotMessageCodec.encode(message, into: &output, withBody: false)
        precondition(encoded, "request, response and store are written by the hot codec")
        let jsonCount = UInt32(truncatingIfNeeded: output.count - start - headerCount)
        BigEndianLength.write(jsonCount, into: &output, at: start + 1)
    }

    private static func givenTwice(_ message: WireMessage) -> ProtocolError {
        ProtocolError(.invalidField, "field \"body\": given in the JSON and as a raw body", id: message.id)
    }
}
