import Synchronization

/// A `response` message encoded once and framed for any number of requests.
///
/// ``MessageCodec/appendFrame(_:answering:to:)`` writes, for each request id, the very bytes
/// ``MessageCodec/appendFrame(_:to:)`` writes for the message with that id, without encoding
/// the message again: only the id's digits and the lengths differ from one frame to the next.
/// The coordinator answers every waiter of a shared trip this way, and every hit of its hot
/// tier, whose frames also carry each their own `ageMs` (spliced in the same way). Each payload
/// form (JSON, or raw body) is encoded the first time a frame of that form is asked for, a raw
/// body held as bytes from then on (the body's own storage, not a copy); a body of at least
/// ``MessageCodec/uncopiedBodyMinimum`` bytes is never held as base64 text (its JSON frames
/// are encoded each time). A value may be shared between threads.
public final class PreparedResponse: Sendable {
    /// The message framed; its `id` is replaced by each request's.
    public let message: ResponseMessage
    /// The encoding of each payload form, made when first needed; `.some(nil)` when the form
    /// cannot be prepared (the message is then encoded for each frame).
    private let forms = Mutex<(json: Template??, raw: Template??)>((nil, nil))

    /// Prepares `message` (its `id` is not used).
    public init(_ message: ResponseMessage) {
        self.message = message
    }

    /// The payload of one form, split around the id and, when the message has one, its age.
    struct Template: Sendable {
        /// The JSON up to the id's first digit.
        let beforeID: [UInt8]
        /// The JSON after the id's last digit (up to the age's first digit, when it has one).
        let afterID: [UInt8]
        /// The JSON after the age's last digit; nil when the message has no `ageMs`.
        let afterAge: [UInt8]?
        /// The body after the JSON, in a raw-body payload.
        let rawBody: MessageBody?
    }

    /// The encoding of the payload form `rawBodies` chooses for this message, or nil when the
    /// message does not start as the hot codec writes a response, or when the form is JSON and
    /// the body at least ``MessageCodec/uncopiedBodyMinimum`` bytes (its base64 text is not
    /// held: the message is encoded for each such frame, so that holding a large body costs
    /// its bytes once).
    func template(rawBodies: Bool) -> Template? {
        // A message without a body is JSON on every connection.
        let raw = rawBodies && message.content != nil
        if !raw, let content = message.content, content.count >= MessageCodec.uncopiedBodyMinimum { return nil }
        return forms.withLock { forms in
            if let made = raw ? forms.raw : forms.json { return made }
            let made = Self.encode(message, raw: raw)
            if raw { forms.raw = .some(made) } else { forms.json = .some(made) }
            return made
        }
    }

    private static let start = Array(#"{"type":"response","id":0"#.utf8)
    /// The age field as the hot codec writes an age of 0; it follows every string of a
    /// response (headers, body), so its last occurrence is the field itself.
    private static let zeroAge = Array(#","ageMs":0"#.utf8)

    private static func encode(_ message: ResponseMessage, raw: Bool) -> Template? {
        var zero = message
        zero.id = 0
        if zero.ageMs != nil { zero.ageMs = 0 }
        var json: [UInt8] = []
        guard HotMessageCodec.encode(.response(zero), into: &json, withBody: !raw), json.starts(with: start) else {
            return nil
        }
        // Raw bodies are held as bytes, so that no frame decodes them again.
        let rawBody = raw ? message.content.map { MessageBody($0.bytes) } : nil
        guard zero.ageMs != nil else {
            return Template(
                beforeID: Array(json[..<(start.count - 1)]), afterID: Array(json[start.count...]), afterAge: nil,
                rawBody: rawBody)
        }
        guard let age = lastRange(of: zeroAge, in: json), age.lowerBound >= start.count else { return nil }
        return Template(
            beforeID: Array(json[..<(start.count - 1)]), afterID: Array(json[start.count..<(age.upperBound - 1)]),
            afterAge: Array(json[age.upperBound...]), rawBody: rawBody)
    }

    /// Where `pattern` last occurs in `bytes`.
    private static func lastRange(of pattern: [UInt8], in bytes: [UInt8]) -> Range<Int>? {
        guard bytes.count >= pattern.count else { return nil }
        for start in stride(from: bytes.count - pattern.count, through: 0, by: -1)
        where bytes[start..<(start + pattern.count)].elementsEqual(pattern) {
            return start..<(start + pattern.count)
        }
        return nil
    }
}

extension MessageCodec {
    /// Appends `prepared` answering request `id` as a whole frame to `output`: the bytes
    /// ``appendFrame(_:to:)`` appends for `prepared`'s message with `id` as its id, and `ageMs`
    /// as its age when given and the message has one.
    ///
    /// - Throws: ``FrameError/oversized(length:limit:)`` when the payload exceeds
    ///   ``maxFrameBytes``; `output` is then unchanged.
    public func appendFrame(
        _ prepared: PreparedResponse, answering id: MessageID, ageMs: UInt64? = nil, to output: inout [UInt8]
    ) throws(FrameError) {
        guard let template = prepared.template(rawBodies: rawBodies) else {
            var message = prepared.message
            message.id = id
            if let ageMs, message.ageMs != nil { message.ageMs = ageMs }
            return try appendFrame(.response(message), to: &output)
        }
        try appendFrame(prepared, template: template, answering: id, ageMs: ageMs, to: &output, withBody: true)
    }

    /// Appends the frame of `prepared`'s `template` answering `id` to `output`, the raw body's
    /// bytes (when it has one) only `withBody`; the frame's length counts them either way.
    func appendFrame(
        _ prepared: PreparedResponse, template: PreparedResponse.Template, answering id: MessageID, ageMs: UInt64?,
        to output: inout [UInt8], withBody: Bool
    ) throws(FrameError) {
        let digits = Self.decimalDigits(of: id)
        let age = template.afterAge == nil ? nil : ageMs ?? prepared.message.ageMs ?? 0
        let ageDigits = age.map(Self.decimalDigits(of:)) ?? 0
        let jsonCount = template.beforeID.count + digits + template.afterID.count + ageDigits + (template.afterAge?.count ?? 0)
        let count: Int
        if let body = template.rawBody {
            count = RawBodyPayload.headerCount + jsonCount + body.count
        } else {
            count = jsonCount
        }
        guard count <= maxFrameBytes, count <= Int(UInt32.max) else {
            throw .oversized(length: UInt32(clamping: count), limit: maxFrameBytes)
        }
        output.reserveCapacity(output.count + BigEndianLength.byteCount + (withBody ? count : jsonCount + RawBodyPayload.headerCount))
        BigEndianLength.append(UInt32(count), to: &output)
        if template.rawBody != nil {
            output.append(RawBodyPayload.marker)
            BigEndianLength.append(UInt32(jsonCount), to: &output)
        }
        output.append(contentsOf: template.beforeID)
        Self.appendDecimal(id, digits: digits, to: &output)
        output.append(contentsOf: template.afterID)
        if let age, let afterAge = template.afterAge {
            Self.appendDecimal(age, digits: ageDigits, to: &output)
            output.append(contentsOf: afterAge)
        }
        if withBody { template.rawBody?.appendBytes(to: &output) }
    }

    /// How many decimal digits `value` is written with.
    package static func decimalDigits(of value: UInt64) -> Int {
        var digits = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        return digits
    }

    /// Appends `value` in decimal, `digits` long (``decimalDigits(of:)``), to `output`.
    package static func appendDecimal(_ value: UInt64, digits: Int, to output: inout [UInt8]) {
        let end = output.count + digits
        output.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits))
        var rest = value
        var index = end
        repeat {
            index -= 1
            output[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        } while rest > 0
    }
}
