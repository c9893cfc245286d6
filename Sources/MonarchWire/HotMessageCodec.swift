/// The messages every request and answer is made of — `request`, `response`, `miss`,
/// `failure`, `cancel`, `ping`, `pong`, and the cache's `store` — read and written straight
/// from and to a frame's bytes, without Codable's machinery, each through its one field list
/// (``WireObject``); a body read from a frame is kept as its base64 text (``MessageBody``), so
/// forwarding it costs a copy, not a decode and an encode.
///
/// Decoding gives the very value ``MessageCodec``'s full decoder gives (the same field lists,
/// through `Codable`), or nil when the payload is anything else or anything out of the ordinary
/// (another type, an invalid or unusual field, a name given twice, non-canonical base64): the
/// full decoder then decides, and names the defect. Encoding writes JSON that decodes to the
/// same message; other types are not written.
enum HotMessageCodec {
    /// The message in `payload` (already checked to be valid UTF-8), or nil to leave it to the
    /// full decoder.
    static func decode(_ payload: UnsafeRawBufferPointer) -> WireMessage? {
        var cursor = JSONCursor(payload)
        // The members are noted on the stack: no allocation per message.
        return ObjectReader.reading(&cursor) { reader, cursor -> WireMessage? in
            cursor.skipSpace()
            guard cursor.isAtEnd, var typeCursor = reader.value("type"), let type = typeCursor.string() else {
                return nil
            }
            switch type {
            case "request": return reader.read(RequestMessage.self).map(WireMessage.request)
            case "response": return reader.read(ResponseMessage.self).map(WireMessage.response)
            case "miss": return reader.read(MissMessage.self).map(WireMessage.miss)
            case "store": return reader.read(StoreMessage.self).map(WireMessage.store)
            case "failure": return reader.read(FailureMessage.self).map(WireMessage.failure)
            case "cancel": return reader.read(CancelMessage.self).map(WireMessage.cancel)
            case "ping": return reader.read(PingMessage.self).map(WireMessage.ping)
            case "pong": return reader.read(PongMessage.self).map(WireMessage.pong)
            default: return nil
            }
        }
    }

    /// Appends the JSON of `message` to `output`, without its `body` field when `withBody` is
    /// false; false (and nothing appended) for a type this codec does not write.
    static func encode(_ message: WireMessage, into output: inout [UInt8], withBody: Bool = true) -> Bool {
        // The writer takes the buffer over (no copy), and gives it back when done.
        var writer = JSONWriter(output: [], withBody: withBody)
        swap(&writer.output, &output)
        defer { swap(&writer.output, &output) }
        switch message {
        case .request(let request): writer.message(request, type: "request")
        case .response(let response): writer.message(response, type: "response")
        case .miss(let miss): writer.message(miss, type: "miss")
        case .store(let store): writer.message(store, type: "store")
        case .failure(let failure): writer.message(failure, type: "failure")
        case .cancel(let cancel): writer.message(cancel, type: "cancel")
        case .ping(let ping): writer.message(ping, type: "ping")
        case .pong(let pong): writer.message(pong, type: "pong")
        default: return false
        }
        return true
    }
}
