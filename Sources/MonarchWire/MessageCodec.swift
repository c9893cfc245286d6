#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns frame payloads into ``WireMessage`` values and back.
///
/// Decoding checks, in order: UTF-8, JSON syntax, that the value is an object, its `type`,
/// then the message's fields; the first defect found becomes a ``ProtocolError`` naming it. A
/// raw-body payload (``rawBodies``) is checked the same way, its JSON first, then its body.
/// A codec value may be shared between threads.
public struct MessageCodec: Sendable {
    /// The largest payload ``encodeFrame(_:)`` produces.
    public var maxFrameBytes: Int

    /// Whether the peer agreed to the `rawBodies` extension (protocol section 2.1,
    /// ``WireFeature/rawBodies``): then messages that carry a body are written as raw-body
    /// payloads, and raw-body payloads are accepted. Off by default: every payload is JSON.
    public var rawBodies: Bool

    /// Creates a codec whose frames hold at most `maxFrameBytes` payload bytes, writing and
    /// accepting raw-body payloads when `rawBodies` is true.
    public init(maxFrameBytes: Int = FrameDecoder.defaultMaxFrameBytes, rawBodies: Bool = false) {
        self.maxFrameBytes = maxFrameBytes
        self.rawBodies = rawBodies
    }

    /// Decodes one frame payload.
    ///
    /// - Throws: ``ProtocolError`` with code `invalidUTF8`, `invalidJSON`, `notAnObject`,
    ///   `missingType`, `unknownType`, `missingField` or `invalidField`, and a message that
    ///   names the field concerned.
    public func decode(_ payload: [UInt8]) throws(ProtocolError) -> WireMessage {
        try payload.withUnsafeBytes { bytes in Result { () throws(ProtocolError) in try decode(bytes) } }.get()
    }

    /// Decodes one frame payload where it lies (see ``decode(_:)-([UInt8])``). With `block`,
    /// the ``FrameBlock`` the payload lies in, a raw body is not copied out of it: the message
    /// keeps the block instead.
    ///
    /// - Throws: ``ProtocolError``, as ``decode(_:)-([UInt8])`` does.
    public func decode(_ payload: UnsafeRawBufferPointer, keeping block: FrameBlock? = nil) throws(ProtocolError) -> WireMessage {
        guard !payload.isEmpty else {
            throw ProtocolError(.invalidJSON, "empty payload: a frame holds one JSON object")
        }
        guard payload[0] != RawBodyPayload.marker else {
            guard rawBodies else {
                throw ProtocolError(
                    .invalidJSON, "a raw-body payload (first byte 0x01) on a connection that did not agree to \"rawBodies\"")
            }
            return try RawBodyPayload.decode(payload, keeping: block) { json throws(ProtocolError) in try decodeJSON(json) }
        }
        return try decodeJSON(payload)
    }

    /// Decodes a payload that holds one JSON object. Never empty: `decode` refuses an empty
    /// payload, and a raw-body payload's JSON is at least one byte.
    private func decodeJSON(_ payload: UnsafeRawBufferPointer) throws(ProtocolError) -> WireMessage {
        guard Self.isValidUTF8(payload) else {
            throw ProtocolError(.invalidUTF8, "payload of \(payload.count) bytes is not valid UTF-8")
        }
        // The messages of every request and answer, read straight from the bytes; anything
        // else, or anything out of the ordinary, goes through the full decoder below.
        if let message = HotMessageCodec.decode(payload) { return message }
        // JSON text never holds a NUL, nor starts with a byte order mark: the full decoder would
        // take either as a sign of another encoding (UTF-16, UTF-32) and read it.
        if payload.starts(with: Self.byteOrderMark) || payload.contains(0) {
            throw ProtocolError(.invalidJSON, "the payload is not UTF-8 JSON text: it starts with a byte order mark or holds a NUL byte")
        }
        // The full decoder would keep the first of a name given twice, other peers the last.
        var names = JSONCursor(payload)
        if names.hasDuplicateName() == true {
            throw ProtocolError(.invalidJSON, "an object of the payload has a member name twice")
        }
        let payload = Array(payload)
        do {
            return try JSONDecoder().decode(WireMessage.self, from: Data(payload))
        } catch let unknown as UnknownMessageType {
            throw ProtocolError(.unknownType, "unknown message type \"\(unknown.type)\"", id: Self.peekID(payload))
        } catch let error as DecodingError {
            throw Self.protocolError(for: error, payload: payload)
        } catch {
            throw ProtocolError(.invalidJSON, "\(error)")
        }
    }

    /// The UTF-8 byte order mark, which a payload must not start with.
    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Whether `bytes` are valid UTF-8: ASCII eight bytes at a time (a body's base64 is
    /// megabytes of it), the full check only when another byte is there.
    static func isValidUTF8(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { isValidUTF8($0) }
    }

    /// Whether `raw` is valid UTF-8 (see ``isValidUTF8(_:)-([UInt8])``).
    static func isValidUTF8(_ raw: UnsafeRawBufferPointer) -> Bool {
        let allASCII = { () -> Bool in
            guard let base = raw.baseAddress else { return true }
            var index = 0
            var seen: UInt64 = 0
            while index + 8 <= raw.count {
                seen |= base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                index += 8
            }
            while index < raw.count {
                seen |= UInt64(base.load(fromByteOffset: index, as: UInt8.self))
                index += 1
            }
            return seen & 0x8080_8080_8080_8080 == 0
        }()
        return allASCII || String(validating: raw.bindMemory(to: UInt8.self), as: UTF8.self) != nil
    }

    /// Encodes a message as a frame payload (no length prefix): its JSON text, or a raw-body
    /// payload when ``rawBodies`` is on and the message carries a body.
    public func encode(_ message: WireMessage) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(expectedSize(of: message))
        appendPayload(message, to: &output)
        return output
    }

    /// Appends the payload of `message` to `output` (see ``encode(_:)``).
    private func appendPayload(_ message: WireMessage, to output: inout [UInt8]) {
        if rawBodies, let body = RawBodyPayload.body(of: message) {
            RawBodyPayload.append(message, body: body, to: &output)
            return
        }
        if HotMessageCodec.encode(message, into: &output) { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        do {
            output.append(contentsOf: try encoder.encode(message))
        } catch {
            // Every message type encodes: their fields are strings, numbers, booleans and Data.
            preconditionFailure("a wire message failed to encode: \(error)")
        }
    }

    /// Appends `message` as a whole frame to `output` — the 4-byte length, then the JSON
    /// payload — encoding it in place.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the payload exceeds
    ///   ``maxFrameBytes``; `output` is then unchanged.
    public func appendFrame(_ message: WireMessage, to output: inout [UInt8]) throws(FrameError) {
        let start = output.count
        output.reserveCapacity(start + 4 + expectedSize(of: message))
        output.append(contentsOf: [0, 0, 0, 0])
        appendPayload(message, to: &output)
        let count = output.count - start - 4
        guard count <= maxFrameBytes, count <= Int(UInt32.max) else {
            output.removeSubrange(start...)
            throw .oversized(length: UInt32(clamping: count), limit: maxFrameBytes)
        }
        BigEndianLength.write(UInt32(count), into: &output, at: start)
    }

    /// About how many bytes the payload of `message` takes: its body (raw, or as base64) and
    /// some room for the rest.
    private func expectedSize(of message: WireMessage) -> Int {
        guard let body = RawBodyPayload.body(of: message) else { return 256 }
        return 512 + (rawBodies ? body.count : body.base64Count)
    }

    /// Encodes a message as a whole frame: the 4-byte length, then the JSON payload.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the payload exceeds
    ///   ``maxFrameBytes``.
    public func encodeFrame(_ message: WireMessage) throws(FrameError) -> [UInt8] {
        try FrameEncoder.frame(payload: encode(message), maxFrameBytes: maxFrameBytes)
    }

    /// Maps a decoding error onto the protocol error that names the defect.
    private static func protocolError(for error: DecodingError, payload: [UInt8]) -> ProtocolError {
        let id = peekID(payload)
        switch error {
        case .keyNotFound(let key, let context):
            let path = (context.codingPath + [key]).map(\.stringValue).joined(separator: ".")
            if path == "type" {
                return ProtocolError(.missingType, "the object has no \"type\"", id: id)
            }
            return ProtocolError(.missingField, "missing field \"\(path)\": \(context.debugDescription)", id: id)
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            if path.isEmpty {
                return ProtocolError(.notAnObject, "the payload is JSON but not an object")
            }
            if path == "type" {
                return ProtocolError(.missingType, "\"type\" is not a string", id: id)
            }
            return ProtocolError(.invalidField, "field \"\(path)\": \(context.debugDescription)", id: id)
        case .dataCorrupted(let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            if path.isEmpty {
                return ProtocolError(.invalidJSON, "the payload is not valid JSON: \(context.debugDescription)")
            }
            return ProtocolError(.invalidField, "field \"\(path)\": \(context.debugDescription)", id: id)
        @unknown default:
            return ProtocolError(.invalidJSON, "\(error)")
        }
    }

    /// The message's `id`, if the payload is an object with a valid integer id, for error replies.
    private static func peekID(_ payload: [UInt8]) -> MessageID? {
        struct IDProbe: Decodable { var id: MessageID? }
        guard let id = (try? JSONDecoder().decode(IDProbe.self, from: Data(payload)))?.id,
            id <= MessageIDLimit
        else { return nil }
        return id
    }
}
