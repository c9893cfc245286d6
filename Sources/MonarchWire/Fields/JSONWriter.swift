/// Writes a ``WireObject`` as compact JSON, for the hot codec: its fields in the order of its
/// list, absent optional fields left out, strings escaped only where JSON requires it.
struct JSONWriter: FieldVisitor {
    typealias Failure = Never

    /// The bytes written so far (the caller's buffer, taken over while writing).
    var output: [UInt8]
    /// Whether body fields (``FieldKind/isBody``) are written; a raw-body payload leaves them out.
    var withBody: Bool
    /// Whether the next field follows another one in its object.
    private var afterField = false

    /// A writer that appends to `output`, leaving out bodies when `withBody` is false.
    init(output: [UInt8], withBody: Bool = true) {
        self.output = output
        self.withBody = withBody
    }

    /// Appends `message` as a whole message: its `type` first, then its fields.
    mutating func message<T: WireObject>(_ message: T, type: StaticString) {
        raw(#"{"type":""#)
        raw(type)
        raw(UInt8(ascii: "\""))
        afterField = true
        var message = message
        T.fields(&self, &message)
        raw(UInt8(ascii: "}"))
    }

    /// Appends `object` as a JSON object of its fields.
    mutating func object<T: WireObject>(_ object: T) {
        raw(UInt8(ascii: "{"))
        afterField = false
        var object = object
        T.fields(&self, &object)
        raw(UInt8(ascii: "}"))
        // The object is the value of a field, or an item of a list: either way a field came first.
        afterField = true
    }

    mutating func required<Kind: FieldKind>(_ name: StaticString, _ value: inout Kind.Value, _ kind: Kind.Type) {
        key(name)
        Kind.write(value, to: &self)
    }

    mutating func optional<Kind: FieldKind>(_ name: StaticString, _ value: inout Kind.Value?, _ kind: Kind.Type) {
        guard let value, withBody || !Kind.isBody else { return }
        key(name)
        Kind.write(value, to: &self)
    }

    /// Appends a field's name and colon, after a comma when a field came before.
    private mutating func key(_ name: StaticString) {
        if afterField { raw(UInt8(ascii: ",")) }
        afterField = true
        raw(UInt8(ascii: "\""))
        // Field names are plain ASCII: nothing to escape.
        raw(name)
        raw(UInt8(ascii: "\""))
        raw(UInt8(ascii: ":"))
    }

    /// Appends one byte.
    mutating func raw(_ byte: UInt8) { output.append(byte) }

    /// Appends `text`'s bytes as they are.
    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { output.append(contentsOf: $0) }
    }

    /// Appends a non-negative integer in decimal.
    mutating func integer(_ value: UInt64) {
        MessageCodec.appendDecimal(value, digits: MessageCodec.decimalDigits(of: value), to: &output)
    }

    /// Appends `true` or `false`.
    mutating func boolean(_ value: Bool) {
        raw(value ? "true" : "false")
    }

    /// Appends a JSON string: quotes, backslashes and control characters escaped, everything
    /// else as is.
    mutating func string(_ text: String) {
        raw(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for (index, byte) in bytes.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                start = index + 1
                switch byte {
                case 0x22: output.append(contentsOf: [0x5C, 0x22])
                case 0x5C: output.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    output.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        raw(UInt8(ascii: "\""))
    }

    /// Appends a body's base64 text as a JSON string (base64 has nothing to escape).
    mutating func base64(_ body: MessageBody) {
        raw(UInt8(ascii: "\""))
        body.appendBase64(to: &output)
        raw(UInt8(ascii: "\""))
    }
}
