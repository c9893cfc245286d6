#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns frame payloads into ``WireMessage`` values and back.
///
/// Decoding checks, in order: UTF-8, JSON syntax, that the value is an object, its `type`,
/// then the message's fields; the first defect found becomes a ``ProtocolError`` naming it.
/// A codec value may be shared between threads.
public struct MessageCodec: Sendable {
    /// The largest payload ``encodeFrame(_:)`` produces.
    public var maxFrameBytes: Int

    /// Creates a codec whose frames hold at most `maxFrameBytes` payload bytes.
    public init(maxFrameBytes: Int = FrameDecoder.defaultMaxFrameBytes) {
        self.maxFrameBytes = maxFrameBytes
    }

    /// Decodes one frame payload.
    ///
    /// - Throws: ``ProtocolError`` with code `invalidUTF8`, `invalidJSON`, `notAnObject`,
    ///   `missingType`, `unknownType`, `missingField` or `invalidField`, and a message that
    ///   names the field concerned.
    public func decode(_ payload: [UInt8]) throws(ProtocolError) -> WireMessage {
        try payload.withUnsafeBytes { bytes in Result { () throws(ProtocolError) in try decode(bytes) } }.get()
    }

    /// Decodes one frame payload where it lies (see ``decode(_:)-([UInt8])``).
    ///
    /// - Throws: ``ProtocolError``, as ``decode(_:)-([UInt8])`` does.
    public func decode(_ payload: UnsafeRawBufferPointer) throws(ProtocolError) -> WireMessage {
        guard !payload.isEmpty else {
            throw ProtocolError(.invalidJSON, "empty payload: a frame holds one JSON object")
        }
        guard Self.isValidUTF8(payload) else {
            throw ProtocolError(.invalidUTF8, "payload of \(payload.count) bytes is not valid UTF-8")
        }
        // The messages of every request and answer, read straight from the bytes; anything
        // else, or anything out of the ordinary, goes through the full decoder below.
        if let message = HotMessageCodec.decode(payload) { return message }
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

    /// Encodes a message as a frame payload (JSON text, no length prefix).
    public func encode(_ message: WireMessage) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(Self.expectedSize(of: message))
        if HotMessageCodec.encode(message, into: &output) { return output }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(message))
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
        output.reserveCapacity(start + 4 + Self.expectedSize(of: message))
        output.append(contentsOf: [0, 0, 0, 0])
        if !HotMessageCodec.encode(message, into: &output) {
            output.append(contentsOf: encode(message))
        }
        let count = output.count - start - 4
        guard count <= maxFrameBytes, count <= Int(UInt32.max) else {
            output.removeSubrange(start...)
            throw .oversized(length: UInt32(clamping: count), limit: maxFrameBytes)
        }
        for (offset, shift) in [24, 16, 8, 0].enumerated() {
            output[start + offset] = UInt8(truncatingIfNeeded: UInt32(count) >> UInt32(shift))
        }
    }

    /// About how many bytes `message` takes as JSON: its body's base64 and some room for the rest.
    private static func expectedSize(of message: WireMessage) -> Int {
        switch message {
        case .response(let response): return 512 + (response.content?.base64Count ?? 0)
        case .store(let store): return 512 + (store.content?.base64Count ?? 0)
        case .request(let request): return 512 + (request.body.map { ($0.count + 2) / 3 * 4 } ?? 0)
        default: return 256
        }
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
