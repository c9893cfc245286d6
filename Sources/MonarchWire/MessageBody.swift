#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(ExtrasBase64)
import ExtrasBase64
#endif

/// The body of a response: bytes, held in the form they came in — as bytes, or as the
/// canonical base64 text of a frame — and turned into the other form only when asked.
///
/// A body read from one frame and written to another (a worker's answer forwarded to its
/// clients, or handed to a cache) is copied as text and never decoded nor encoded again.
/// Two bodies are equal when their bytes are.
public struct MessageBody: Sendable, Hashable, CustomStringConvertible {
    private enum Form: Sendable {
        case bytes(Data)
        /// Canonical base64 (padded, no line breaks, unused bits zero), checked on the way in.
        case base64([UInt8])
    }

    private var form: Form

    /// A body holding `bytes`.
    public init(_ bytes: Data) {
        form = .bytes(bytes)
    }

    /// A body holding what `text` encodes, or nil when `text` is not canonical base64 (the
    /// form Monarch's frames carry: padded, no line breaks or spaces, unused bits zero).
    public init?(base64 text: UnsafeRawBufferPointer) {
        guard Self.isCanonicalBase64(text) else { return nil }
        form = .base64(Array(text))
    }

    /// The bytes (decoded from the text when the body holds text).
    public var bytes: Data {
        switch form {
        case .bytes(let bytes): return bytes
        case .base64(let text):
            guard !text.isEmpty else { return Data() }
            #if canImport(ExtrasBase64)
            // Checked canonical on the way in, so decoding cannot fail.
            return Data((try? Base64.decode(bytes: text)) ?? [])
            #else
            return Data(base64Encoded: Data(text)) ?? Data()
            #endif
        }
    }

    /// How many bytes the body holds, without decoding it.
    public var count: Int {
        switch form {
        case .bytes(let bytes): return bytes.count
        case .base64(let text):
            guard let last = text.last else { return 0 }
            let padding = last != UInt8(ascii: "=") ? 0 : text[text.count - 2] == UInt8(ascii: "=") ? 2 : 1
            return text.count / 4 * 3 - padding
        }
    }

    /// Whether the body holds no bytes.
    public var isEmpty: Bool { count == 0 }

    /// How many bytes its base64 text takes.
    public var base64Count: Int {
        switch form {
        case .bytes(let bytes): return (bytes.count + 2) / 3 * 4
        case .base64(let text): return text.count
        }
    }

    /// Appends the body's base64 text to `output` (copied when the body holds text, encoded
    /// straight into `output` otherwise).
    public func appendBase64(to output: inout [UInt8]) {
        switch form {
        case .base64(let text):
            output.append(contentsOf: text)
        case .bytes(let bytes):
            guard !bytes.isEmpty else { return }
            #if canImport(ExtrasBase64)
            let length = base64Count
            bytes.withUnsafeBytes { input in
                output.append(addingCapacity: length) { span in
                    Base64.encode(bytes: input.bindMemory(to: UInt8.self).span, into: &span)
                }
            }
            #else
            output.append(contentsOf: bytes.base64EncodedData())
            #endif
        }
    }

    /// Appends the body's bytes to `output` (copied when the body holds bytes, decoded from
    /// its text otherwise).
    public func appendBytes(to output: inout [UInt8]) {
        bytes.withUnsafeBytes { raw in output.append(contentsOf: raw.bindMemory(to: UInt8.self)) }
    }

    public static func == (lhs: MessageBody, rhs: MessageBody) -> Bool {
        if case .base64(let left) = lhs.form, case .base64(let right) = rhs.form { return left == right }
        return lhs.bytes == rhs.bytes
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes)
    }

    public var description: String { "\(count) bytes" }

    // MARK: Checking base64

    /// Whether `text` is canonical base64: a multiple of 4 long, only the 64 letters but for
    /// one or two `=` at the end, and the bits the padding leaves unused zero.
    static func isCanonicalBase64(_ text: UnsafeRawBufferPointer) -> Bool {
        let count = text.count
        guard count % 4 == 0 else { return false }
        guard count > 0 else { return true }
        let padding = text[count - 1] != UInt8(ascii: "=") ? 0 : text[count - 2] == UInt8(ascii: "=") ? 2 : 1
        let letters = count - padding
        let valid = sextets.withUnsafeBufferPointer { table -> Bool in
            var bad: UInt8 = 0
            for index in 0..<letters { bad |= table[Int(text[index])] }
            return bad & 0x80 == 0
        }
        guard valid else { return false }
        switch padding {
        case 2: return sextets[Int(text[count - 3])] & 0x0F == 0
        case 1: return sextets[Int(text[count - 2])] & 0x03 == 0
        default: return true
        }
    }

    /// Each byte's 6-bit value in the base64 alphabet, 0x80 for bytes outside it.
    private static let sextets: [UInt8] = {
        var table = [UInt8](repeating: 0x80, count: 256)
        for (value, letter) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(letter)] = UInt8(value)
        }
        return table
    }()
}
